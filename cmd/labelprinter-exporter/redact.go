package main

// redact.go holds the redaction rule of the exporter's own output (debug answers and log
// lines): a module's credentials, and anything shaped like an Authorization value, never show,
// even when a printer echoes them back in an error body.

import (
	"encoding/base64"
	"os"
	"regexp"
	"slices"
	"strings"

	promconfig "github.com/prometheus/common/config"
)

// secretSource knows where a module's credentials are. Files are read when the values are
// asked for, so a rotated credentials file is redacted under its new content.
type secretSource struct {
	inline []string
	files  []string
	// Basic auth, whose header carries base64(user:password) rather than either part.
	user, userFile, pass, passFile string
}

func secretsOf(hc *promconfig.HTTPClientConfig) secretSource {
	var s secretSource
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

// values returns the credentials as they are now, longest first (so a secret that contains
// another is replaced whole).
func (s secretSource) values() []string {
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
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// authValue matches an Authorization value of the usual schemes, whoever's it is (an OAuth2
// access token the exporter never sees in the clear included). A value must hold a digit, as
// every generated token does, so prose such as "wrong bearer token" is left alone.
var authValue = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+|=|:\s*)[A-Za-z._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*`)

const redacted = "[REDACTED]"

// redact removes secrets and Authorization-shaped values from s.
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return authValue.ReplaceAllString(s, "${1}${2}"+redacted)
}
