package labelprinter

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseBaseURL validates the printer address and returns it with the /api/v3 prefix, and the
// escaped path part of that, such as "/printer7/api/v3".
func parseBaseURL(raw string) (base, path string, err error) {
	const op = "NewClient"
	if raw == "" {
		return "", "", invalidArg(op, "base URL is empty")
	}
	if strings.TrimSpace(raw) != raw {
		return "", "", invalidArg(op, "base URL has surrounding spaces")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error would repeat the raw URL, which may hold a password.
		return "", "", invalidArg(op, "base URL does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", invalidArg(op, "base URL must start with http:// or https://")
	}
	if u.User != nil {
		return "", "", invalidArg(op, "base URL must not hold credentials; use WithBasicAuth or WithBearerToken")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return "", "", invalidArg(op, "base URL %q has no host", u.Redacted())
	}
	if u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#") {
		return "", "", invalidArg(op, "base URL %q must not have a query or fragment", u.Redacted())
	}
	if u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
			return "", "", invalidArg(op, "base URL has an invalid port %q", u.Port())
		}
	}
	if !utf8.ValidString(u.Host) {
		return "", "", invalidArg(op, "base URL host is not valid UTF-8")
	}
	path = strings.TrimRight(u.EscapedPath(), "/")
	if v, ok := apiVersion(path); ok && v != "3" {
		return "", "", invalidArg(op, "base URL path ends in /api/v%s, but this SDK speaks API v3: give the printer's address without /api/v%s (or with /api/v3)", v, v)
	}
	if _, ok := apiVersion(path); !ok {
		path += apiPrefix
	}
	// URL.String re-escapes the host, which keeps an IPv6 zone ("%25eth0") parsable.
	base = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() + path
	// Some hosts url.Parse accepts do not survive that escaping (a zone holding a byte such
	// as 0xBF comes back as "%BF", which url.Parse refuses): every request would then fail to
	// build, so the address is refused here instead.
	if back, err := url.Parse(base); err != nil || back.Host != u.Host {
		return "", "", invalidArg(op, "base URL host %q cannot be used in a request URL", u.Host)
	}
	return base, path, nil
}

// apiVersion returns N when the escaped path ends in an "/api/vN" segment pair, N being
// digits (with dots, as in v3.1), compared without regard to case; ok is false otherwise.
func apiVersion(path string) (string, bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", false
	}
	last := path[i+1:]
	if len(last) < 2 || (last[0] != 'v' && last[0] != 'V') || !strings.HasSuffix(strings.ToLower(path[:i]), "/api") {
		return "", false
	}
	v := last[1:]
	for j := 0; j < len(v); j++ {
		if (v[j] < '0' || v[j] > '9') && v[j] != '.' {
			return "", false
		}
	}
	return v, true
}

// escapeName checks a label, image, table or printer name and returns it escaped as exactly one
// path segment. This is the one place names reach a URL.
func escapeName(op, what, name string) (string, error) {
	switch name {
	case "":
		return "", invalidArg(op, "%s name is empty", what)
	case ".", "..":
		return "", invalidArg(op, "%s name %q would change the path", what, name)
	}
	if !utf8.ValidString(name) {
		return "", invalidArg(op, "%s name is not valid UTF-8", what)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "", invalidArg(op, "%s name %q contains a control character", what, name)
		}
	}
	return url.PathEscape(name), nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
