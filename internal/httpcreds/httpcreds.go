// Package httpcreds lists the credentials of a prometheus/common HTTPClientConfig, the one
// place that knows which of its fields are secret. The tools that build SDK Clients on such a
// config (the exporter, the MQTT bridge) pass the values to labelprinter.WithRedactedValues:
// their round tripper adds the credentials out of the SDK's sight, so the SDK must be told them
// to keep them out of its errors.
package httpcreds

import (
	"encoding/base64"
	"os"
	"strings"

	promconfig "github.com/prometheus/common/config"
)

// Source knows where a config's credentials are: inline values and files. Files are read when
// Values is called, so a rotated credentials file is listed under its new content.
type Source struct {
	inline []string
	files  []string
	// Basic auth, whose header carries base64(user:password) rather than either part.
	user, userFile, pass, passFile string
}

// Of returns the credentials of hc: authorization credentials and credentials_file,
// bearer_token and bearer_token_file, the basic-auth password (and its header's base64 of
// user:password), the OAuth2 client secret, and the secrets and files of http_headers.
// A client certificate's key never travels, so it is not listed.
func Of(hc *promconfig.HTTPClientConfig) Source {
	var s Source
	if a := hc.Authorization; a != nil {
		s.inline = append(s.inline, string(a.Credentials))
		s.files = append(s.files, a.CredentialsFile)
	}
	s.inline = append(s.inline, string(hc.BearerToken))
	s.files = append(s.files, hc.BearerTokenFile)
	if b := hc.BasicAuth; b != nil {
		s.user, s.userFile, s.pass, s.passFile = b.Username, b.UsernameFile, string(b.Password), b.PasswordFile
		s.inline = append(s.inline, string(b.Password))
		s.files = append(s.files, b.PasswordFile)
	}
	if o := hc.OAuth2; o != nil {
		s.inline = append(s.inline, string(o.ClientSecret))
		s.files = append(s.files, o.ClientSecretFile)
	}
	if h := hc.HTTPHeaders; h != nil {
		for _, v := range h.Headers {
			for _, sec := range v.Secrets {
				s.inline = append(s.inline, string(sec))
			}
			s.files = append(s.files, v.Files...)
		}
	}
	return s
}

// Values returns the credentials as they are now, the files read (trimmed of surrounding
// space, as prometheus/common sends them); a file that cannot be read gives nothing, as its
// request cannot carry it either. Empty values are left out.
func (s Source) Values() []string {
	read := func(f string) string {
		if f == "" {
			return ""
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	var out []string
	add := func(v string) {
		if v != "" {
			out = append(out, v)
		}
	}
	for _, v := range s.inline {
		add(v)
	}
	for _, f := range s.files {
		add(read(f))
	}
	if s.user != "" || s.userFile != "" || s.pass != "" || s.passFile != "" {
		user, pass := s.user, s.pass
		if s.userFile != "" {
			user = read(s.userFile)
		}
		if s.passFile != "" {
			pass = read(s.passFile)
		}
		add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
	}
	return out
}
