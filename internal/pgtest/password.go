package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// passwordGroup is the role whose members the server asks for a password over TCP; every
// other role stays trusted, so the tests that do not test a password need none.
const passwordGroup = "pgtest_password"

// Role is a login role with a password, which the server checks (scram-sha-256).
type Role struct {
	Name     string
	Password string
	// DSN connects as the role, without the password, to a schema it owns (named by the
	// DSN's search_path) in the server's own database.
	DSN string
}

// PasswordRole creates a role of t's own that must give its password to log in, and a schema
// it owns; the first call puts the scram-sha-256 lines for such roles before the trust lines
// of the server's pg_hba.conf and waits until the server has loaded them. It skips t on a
// server this package did not start (LABELPRINTER_POSTGRES_DSN's pg_hba.conf is not its own).
func PasswordRole(t testing.TB) Role {
	t.Helper()
	return Shared(t).PasswordRole(t)
}

// PasswordRole is the package's PasswordRole on s.
func (s *Server) PasswordRole(t testing.TB) Role {
	t.Helper()
	if s.bin == "" {
		t.Skip("the server is LABELPRINTER_POSTGRES_DSN's, whose pg_hba.conf this test cannot change; it runs on a server of its own (unset the variable)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(context.Background())
	suffix := strings.ToLower(rand.Text()[:12])
	r := Role{Name: "pw_" + suffix, Password: rand.Text()}
	schema := "t_" + suffix
	for _, q := range []string{
		"SET password_encryption = 'scram-sha-256'",
		fmt.Sprintf("DO $$BEGIN CREATE ROLE %s NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$", passwordGroup),
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE %s", r.Name, r.Password, passwordGroup),
		fmt.Sprintf("CREATE SCHEMA %s AUTHORIZATION %s", schema, r.Name),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("pgtest: %s: %v", strings.SplitN(q, " PASSWORD ", 2)[0], err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, s.dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS "+r.Name)
			_ = c.Close(ctx)
		}
	})
	r.DSN = WithParam(WithUser(s.dsn, r.Name), "search_path", schema)
	if err := s.askPasswords(ctx, conn, r); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return r
}

// askPasswords puts the lines that ask passwordGroup's members for theirs before every other
// line of pg_hba.conf (the first line that matches decides), once per server, has the server
// read the file again and waits until r, without its password, is refused.
func (s *Server) askPasswords(ctx context.Context, conn *pgx.Conn, r Role) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.passwords {
		return nil
	}
	path := filepath.Join(s.dir, "data", "pg_hba.conf")
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := "# pgtest: the members of " + passwordGroup + " give their password\n" +
		"host all +" + passwordGroup + " 127.0.0.1/32 scram-sha-256\n" +
		"host all +" + passwordGroup + " ::1/128 scram-sha-256\n"
	if err := os.WriteFile(path, append([]byte(lines), old...), 0o600); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return err
	}
	// The server reads the file on its own time once signalled.
	for {
		c, err := pgx.Connect(ctx, r.DSN)
		if err == nil {
			_ = c.Close(ctx)
		} else if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "28P01" {
			s.passwords = true
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server still lets %s in without a password after reloading pg_hba.conf: %v", r.Name, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// WithUser returns dsn, a URL, connecting as user (with no password).
func WithUser(dsn, user string) string {
	i := strings.Index(dsn, "://")
	if i < 0 {
		return dsn + " user=" + user
	}
	rest := dsn[i+3:]
	host := rest
	if j := strings.IndexAny(rest, "/?"); j >= 0 {
		host = rest[:j]
	}
	tail := rest[len(host):]
	if j := strings.LastIndexByte(host, '@'); j >= 0 {
		host = host[j+1:]
	}
	return dsn[:i+3] + user + "@" + host + tail
}
