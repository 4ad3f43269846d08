// Package secretfile holds the one rule by which the module's programs read a password from a
// file (the bridge's password_file fields, labelctl's --db-password-file) and put it into a
// PostgreSQL connection string that holds none.
package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// Read returns the password held in the file at path: its whole content less one trailing
// newline ("\n" or "\r\n"), as an editor or `echo` leaves it; any other byte is the password's.
// An empty password is an error, as is a file that cannot be read; the error names path and
// never quotes the file's content.
func Read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, fmt.Errorf("%s: cannot read", path)
	}
	if t, ok := bytes.CutSuffix(b, []byte("\r\n")); ok {
		b = t
	} else {
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	return b, nil
}

// kvPassword finds a password keyword in a keyword/value connection string.
var kvPassword = regexp.MustCompile(`(?:^|\s)password\s*=`)

// DSNHasPassword reports whether a PostgreSQL connection string (a postgres:// URL or
// keyword/value pairs) holds a password: with a password file beside it, the password would be
// in two places.
func DSNHasPassword(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if _, ok := u.User.Password(); ok {
			return true
		}
		for k := range u.Query() {
			if strings.EqualFold(k, "password") {
				return true
			}
		}
		return false
	}
	return kvPassword.MatchString(dsn)
}

// WithPassword returns dsn, which holds no password, with pw as its password: in the URL's
// userinfo, or as a quoted keyword/value pair.
func WithPassword(dsn, pw string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		user := ""
		if u.User != nil {
			user = u.User.Username()
		}
		u.User = url.UserPassword(user, pw)
		return u.String()
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return dsn + " password='" + r.Replace(pw) + "'"
}
