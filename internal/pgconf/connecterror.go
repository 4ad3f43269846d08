package pgconf

import (
	"errors"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// SSLModeAsked reports whether dsn, or the environment pgx reads beside it, chooses an
// sslmode. Without one, pgx tries TLS first and falls back to a plain connection, and a server
// without TLS refusing the first try is no part of what went wrong.
func SSLModeAsked(dsn string) bool {
	return strings.Contains(dsn, "sslmode") || os.Getenv("PGSSLMODE") != ""
}

// Describe is err, a failure of pgx, as one line. A failed connection is said once per cause:
// pgx tries each address twice under the default sslmode (with TLS, then without) and lists
// both failures, the same refusal twice or a "server refused TLS connection" beside the real
// cause. Unless sslAsked (SSLModeAsked), the refused TLS is left out when another cause
// remains; the same text is said once. Callers still take the password out of the result.
func Describe(err error, sslAsked bool) string {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return oneLine(err.Error())
	}
	var causes []error
	if j, ok := ce.Unwrap().(interface{ Unwrap() []error }); ok {
		causes = j.Unwrap()
	} else if u := ce.Unwrap(); u != nil {
		causes = []error{u}
	}
	var said []string
	seen := map[string]bool{}
	for _, c := range causes {
		t := oneLine(c.Error())
		if !sslAsked && strings.Contains(t, "server refused TLS connection") {
			continue
		}
		if !seen[t] {
			seen[t] = true
			said = append(said, t)
		}
	}
	if len(said) == 0 { // nothing but the refused TLS: that is the cause then
		return oneLine(err.Error())
	}
	user, db := "", ""
	if ce.Config != nil {
		user, db = ce.Config.User, ce.Config.Database
	}
	return "cannot connect as user " + user + " to database " + db + ": " + strings.Join(said, "; ")
}

// oneLine joins the lines of a message pgx indents under its first.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n\t", "; ")), " ")
}
