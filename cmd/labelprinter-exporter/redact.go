package main

// redact.go holds what the exporter adds to the SDK's redaction rule. A module's credentials
// are added by its prometheus/common round tripper, which the SDK cannot see, so each probe's
// Client is given their current values (secretSource.values, via WithRedactedValues): the SDK
// then keeps them out of its errors in every spelling, and Client.Redact keeps them out of the
// exporter's own text (debug answers, log lines). What stays here is what no Client can know:
// Authorization-shaped values whose credential the exporter never holds, such as an OAuth2
// access token.

import (
	"encoding/base64"
	"os"
	"regexp"
	"strings"

	labelprinter "github.com/labelprinter/go-labelprinter"
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

// values returns the credentials as they are now, for the SDK's WithRedactedValues.
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
	return out
}

// authValue matches an Authorization value of the usual schemes, whoever's it is (an OAuth2
// access token the exporter never sees in the clear included). A value must hold a digit, as
// every generated token does, so prose such as "wrong bearer token" is left alone. Backslash and
// percent belong to the value, and a space may be written "+", "%20" or "\u0020", so a
// JSON-escaped ("abc\/DEF") or percent-encoded echo loses all of it rather than the part
// before its first escape.
var authValue = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+|=|:\s*|\+|%20|\\u0020)[A-Za-z._~+/=%\\-]*[0-9][A-Za-z0-9._~+/=%\\-]*`)

const redacted = "[REDACTED]"

// redact removes the probe Client's credentials (its rule: the module's credentials in any
// spelling) and then Authorization-shaped values from s.
func redact(c *labelprinter.Client, s string) string {
	return authValue.ReplaceAllString(c.Redact(s), "${1}${2}"+redacted)
}
