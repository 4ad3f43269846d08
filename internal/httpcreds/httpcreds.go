// Package httpcreds lists the credentials of a prometheus/common HTTPClientConfig, the one
// place that knows which of its fields are secret. The tools that build SDK Clients on such a
// config (the exporter, the MQTT bridge) pass the values to labelprinter.WithRedactedValues:
// their round tripper adds the credentials out of the SDK's sight, so the SDK must be told them
// to keep them out of its errors. What the round tripper makes on its own (an OAuth2 access
// token) is in no field: a Recorder (NewClient, NewRoundTripper) watches the Authorization,
// Proxy-Authorization and Cookie values requests carry when they are written to the
// connection, and Credentials.Values gives both.
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
// user:password), the OAuth2 client secret, a proxy URL's password (and its header's base64),
// the proxy CONNECT headers, and the secrets and files of http_headers. What a round tripper
// makes on its own, such as an OAuth2 access token, is no field of the config: a Recorder
// (NewClient) sees it sent.
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
	// A proxy's credentials: its URL's password (sent as Proxy-Authorization, base64 of
	// user:password) and the CONNECT headers, which net/http writes without a client trace,
	// so a Recorder cannot see them.
	if u := hc.ProxyURL.URL; u != nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			s.inline = append(s.inline, p, base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+p)))
		}
	}
	for _, vs := range hc.ProxyConnectHeader {
		for _, v := range vs {
			s.inline = append(s.inline, string(v))
		}
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
