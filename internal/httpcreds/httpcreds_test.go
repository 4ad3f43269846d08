package httpcreds

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"testing"

	promconfig "github.com/prometheus/common/config"
)

// TestValues: every credential kind of an HTTPClientConfig is listed, files read at the call
// (a rotated file gives its new content), and nothing else.
func TestValues(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, c := range []struct {
		name string
		hc   promconfig.HTTPClientConfig
		want []string
	}{
		{"none", promconfig.HTTPClientConfig{}, nil},
		{"authorization", promconfig.HTTPClientConfig{Authorization: &promconfig.Authorization{Type: "Bearer", Credentials: "inline-token"}}, []string{"inline-token"}},
		{"credentials_file", promconfig.HTTPClientConfig{Authorization: &promconfig.Authorization{CredentialsFile: file("cred", " file-token\n")}}, []string{"file-token"}},
		{"bearer_token", promconfig.HTTPClientConfig{BearerToken: "old-bearer"}, []string{"old-bearer"}},
		{"bearer_token_file", promconfig.HTTPClientConfig{BearerTokenFile: file("bearer", "old-bearer-file")}, []string{"old-bearer-file"}},
		{"basic", promconfig.HTTPClientConfig{BasicAuth: &promconfig.BasicAuth{Username: "op", Password: "pw-1"}}, []string{"pw-1", b64("op:pw-1")}},
		{"basic files", promconfig.HTTPClientConfig{BasicAuth: &promconfig.BasicAuth{UsernameFile: file("user", "op2\n"), PasswordFile: file("pass", "pw-2\n")}}, []string{"pw-2", b64("op2:pw-2")}},
		{"oauth2", promconfig.HTTPClientConfig{OAuth2: &promconfig.OAuth2{ClientID: "id", ClientSecret: "client-secret"}}, []string{"client-secret"}},
		{"oauth2 file", promconfig.HTTPClientConfig{OAuth2: &promconfig.OAuth2{ClientID: "id", ClientSecretFile: file("cs", "client-secret-file")}}, []string{"client-secret-file"}},
		{"http_headers", promconfig.HTTPClientConfig{HTTPHeaders: &promconfig.Headers{Headers: map[string]promconfig.Header{
			"X-Api-Key": {Secrets: []promconfig.Secret{"header-secret"}, Files: []string{file("hdr", "header-file")}, Values: []string{"not-secret"}},
		}}}, []string{"header-secret", "header-file"}},
		{"missing file", promconfig.HTTPClientConfig{BearerTokenFile: filepath.Join(dir, "nosuch")}, nil},
	} {
		got := Of(&c.hc).Values()
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	hc := promconfig.HTTPClientConfig{Authorization: &promconfig.Authorization{CredentialsFile: file("rot", "before")}}
	s := Of(&hc)
	file("rot", "after")
	if got := s.Values(); !slices.Equal(got, []string{"after"}) {
		t.Errorf("rotated file: %q", got)
	}
}
