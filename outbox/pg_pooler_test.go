package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresNoPreparedStatements: an Outbox leaves no named prepared statement in its
// sessions, which a pooler in transaction mode would hand to another client (or lose) between
// two transactions: enqueue, list, get, cancel, delivery and the lanes' leases all run on a
// pool of one connection, which then holds no prepared statement.
func TestPostgresNoPreparedStatements(t *testing.T) {
	dsn := pgtest.WithParam(pgtest.DSN(t), "pool_max_conns", "1")
	srv, rec := startSim(t, nil)
	ob := openPG(t, dsn, "q", newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	enqueue(t, ob, Intent{ID: "b", Printer: "line2", Job: job("b")})
	if err := ob.Cancel("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := ob.List(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ob.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if e, err := ob.Get("a"); err != nil || e.State != Sent || len(rec.received()) != 1 {
		t.Fatalf("a: %+v, %v; received %v", e, err, rec.received())
	}
	var names []string
	rows, err := ob.store.(*pgStore).pool.Query(ctx, `SELECT name FROM pg_prepared_statements`, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	if names, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(names) > 0 {
		t.Errorf("the session holds %d prepared statements (%v); a pooler in transaction mode would break them", len(names), names[0])
	}
}
