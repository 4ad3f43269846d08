// Package ctlurl holds the one spelling of a controller URL: the form that names a bridge's
// outbox file and the controller a PostgreSQL outbox queue belongs to.
package ctlurl

import (
	"net/url"
	"strings"
)

// Normalize returns a controller URL in its one spelling: scheme and host in lower case, the
// scheme's default port (80, 443) left out, no trailing slash and no user information (a
// credential has no place in a name). "HTTP://Host:80/" and "http://host" are one
// controller. The URL's path, query and fragment keep their case; a URL that does not parse
// is returned as it was, less trailing slashes.
func Normalize(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.TrimRight(raw, "/")
	}
	u.User = nil
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if u.Scheme == "http" && port == "80" || u.Scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Path = strings.TrimRight(u.Path, "/")
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/")
	}
	return u.String()
}

// OfBase returns the controller URL of an SDK client's base URL (which ends in "/api/v3"),
// normalised.
func OfBase(base string) string {
	return Normalize(strings.TrimSuffix(strings.TrimRight(base, "/"), "/api/v3"))
}
