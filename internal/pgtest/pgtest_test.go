package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"
)

// TestMain stops the shared server before looking for leaked goroutines: the one that waits
// for the server's process ends only when the server has stopped, and must end then.
func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestServer: a schema of the test's own, named by the DSN's search_path, on a server that
// survives a crash and restart.
func TestServer(t *testing.T) {
	dsn := DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func() {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS x (a int)"); err != nil {
			t.Fatal(err)
		}
		var schema string
		if err := conn.QueryRow(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'x'").Scan(&schema); err != nil {
			t.Fatal(err)
		}
		if schema == "public" || schema == "" {
			t.Errorf("table in schema %q, want the test's own", schema)
		}
	}
	check()
	Shared(t).Restart(t)
	check()
}

// TestPooler: the pooler carries queries to the test's own database, but a LISTEN through it
// hears nothing, which is what the tests behind it rely on; straight to the server it does.
func TestPooler(t *testing.T) {
	pooled, direct := Pooler(t).NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	heard := func(dsn string) bool {
		t.Helper()
		l, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close(context.Background())
		if _, err := l.Exec(ctx, "LISTEN ch"); err != nil {
			t.Fatal(err)
		}
		n, err := pgx.Connect(ctx, pooled)
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close(context.Background())
		var db string
		if err := n.QueryRow(ctx, "SELECT current_database()", pgx.QueryExecModeSimpleProtocol).Scan(&db); err != nil || db == "postgres" {
			t.Fatalf("through the pooler: database %q, %v", db, err)
		}
		if _, err := n.Exec(ctx, "NOTIFY ch, 'x'"); err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(ctx, time.Second)
		defer wcancel()
		_, err = l.WaitForNotification(wctx)
		return err == nil
	}
	if heard(pooled) {
		t.Error("a LISTEN through the pooler heard a notification: the pooler is not in transaction mode")
	}
	if !heard(direct) {
		t.Error("a LISTEN straight to the server heard nothing")
	}
}

// TestServerCPU: the server's CPU time grows with the work a connection makes it do.
func TestServerCPU(t *testing.T) {
	srv := Shared(t)
	before, ok := srv.CPU()
	if !ok {
		t.Skip("the server was not started by this package, or there is no /proc")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// About a second of the server's CPU, whatever the machine's load.
	if _, err := conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 5000000)"); err != nil {
		t.Fatal(err)
	}
	after, _ := srv.CPU()
	if after-before < 20*time.Millisecond {
		t.Errorf("the server's CPU went from %v to %v over a query that takes it hundreds of milliseconds", before, after)
	}
}

// TestPasswordRole: a role from PasswordRole logs in with its password and writes to its
// schema; without it, or with another, the server refuses it (28P01), while the tests'
// superuser is still trusted. A second role is asked for its own password too.
func TestPasswordRole(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 {
		r := PasswordRole(t)
		conn, err := pgx.Connect(ctx, WithParam(r.DSN, "password", r.Password))
		if err != nil {
			t.Fatalf("role %d with its password: %v", i, err)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE x (a int)"); err != nil {
			t.Errorf("role %d: a table in its schema: %v", i, err)
		}
		_ = conn.Close(ctx)
		for _, dsn := range []string{r.DSN, WithParam(r.DSN, "password", r.Password+"x")} {
			_, err := pgx.Connect(ctx, dsn)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
				t.Errorf("role %d without its password: %v, want 28P01 (password authentication failed)", i, err)
			}
		}
	}
	conn, err := pgx.Connect(ctx, DSN(t))
	if err != nil {
		t.Fatalf("the superuser, trusted: %v", err)
	}
	_ = conn.Close(ctx)
}
