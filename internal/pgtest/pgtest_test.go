package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
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
