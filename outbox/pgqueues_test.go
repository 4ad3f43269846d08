package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresQueuesListsAndCreatesNothing: PostgresQueues reads a database without the
// outbox's tables as holding no queue and leaves it so; then it lists each queue with its
// entries by state, pruned ones left out, and its controller once a client opened it. An
// unreachable database is an error without the password, said once.
func TestPostgresQueuesListsAndCreatesNothing(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	qs, err := PostgresQueues(ctx, dsn)
	if err != nil || len(qs) != 0 {
		t.Fatalf("a new database: %v, %v", qs, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var made bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_entries') IS NOT NULL`).Scan(&made); err != nil || made {
		t.Fatalf("PostgresQueues made the outbox tables (%v, %v)", made, err)
	}

	srv, _ := startSim(t, nil)
	a, err := OpenPostgres(ctx, dsn, "line-a", newClient(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenPostgres(ctx, dsn, "line-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, id := range []string{"b1", "b2"} {
		if _, err := b.Enqueue(ctx, Intent{ID: id, Printer: "line1", Job: job(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Cancel("b2"); err != nil {
		t.Fatal(err)
	}
	qs, err = PostgresQueues(ctx, dsn)
	if err != nil || len(qs) != 2 {
		t.Fatalf("two queues: %+v, %v", qs, err)
	}
	if qs[0].Name != "line-a" || qs[0].Controller != srv.URL || len(qs[0].Entries) != 0 {
		t.Errorf("line-a: %+v, want controller %s and no entry", qs[0], srv.URL)
	}
	if qs[1].Name != "line-b" || qs[1].Controller != "" || qs[1].Entries[Pending] != 1 || qs[1].Entries[Cancelled] != 1 {
		t.Errorf("line-b: %+v, want no controller, 1 pending, 1 cancelled", qs[1])
	}

	_, err = PostgresQueues(ctx, "postgres://lp:Sekr1t-q@127.0.0.1:1/plant")
	if err == nil || strings.Contains(err.Error(), "Sekr1t-q") || strings.Count(err.Error(), "connection refused") != 1 ||
		!strings.Contains(err.Error(), "PostgreSQL: connecting: ") {
		t.Errorf("an unreachable database: %v", err)
	}
}
