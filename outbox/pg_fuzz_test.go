package outbox

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// FuzzDSNPasswordRedacted: whatever the password, and whether the DSN around it parses or
// not, neither the error of parseDSN nor a driver error that repeats the password it was
// given carries it once redacted.
func FuzzDSNPasswordRedacted(f *testing.F) {
	f.Add("Hunter2-s3cret", "5432", false)
	f.Add("pa ss'wo\\rd", "x", true)
	f.Add("p@ss:w/o%rd?#", "99999", false)
	f.Add("ÿ€ secret=", "", true)
	f.Fuzz(func(t *testing.T, pw, port string, keyword bool) {
		if len(pw) < 6 || strings.ContainsRune(pw, 0) || strings.ContainsRune(port, 0) {
			return
		}
		var dsn, without string
		if keyword {
			q := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw)
			dsn = "host=127.0.0.1 port=" + port + " user=lp password='" + q + "' dbname=plant"
			without = "host=127.0.0.1 port=" + port + " user=lp password='' dbname=plant"
		} else {
			u := url.URL{Scheme: "postgres", User: url.UserPassword("lp", pw), Host: "127.0.0.1:" + port, Path: "/plant"}
			dsn = u.String()
			u.User = url.User("lp")
			without = u.String()
		}
		const fixed = "invalid argument: outbox.OpenPostgres: cannot parse xxxxx failed to connect to user=lp password="
		if strings.Contains(without, pw) || strings.Contains(fixed, pw) {
			return // the password is text the error may carry for its own sake
		}
		cfg, secret, err := parseDSN(dsn)
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("DSN %q: the error carries the password: %v", dsn, err)
			}
			return
		}
		driver := fmt.Sprintf("failed to connect to `user=lp password=%s`: %s %s", cfg.ConnConfig.Password, dsn, url.QueryEscape(pw))
		got := redact(driver, secret)
		if strings.Contains(got, pw) {
			t.Fatalf("DSN %q: a driver error redacted to %q", dsn, got)
		}
		if esc := userinfoEscape(pw); !keyword && len(esc) >= 6 && !strings.Contains(without, esc) && strings.Contains(got, esc) {
			t.Fatalf("DSN %q: a driver error keeps the password as the URL writes it: %q", dsn, got)
		}
	})
}
