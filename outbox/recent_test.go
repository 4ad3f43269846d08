package outbox

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestRecent: Recent returns the newest final entries by their last change, oldest first, and
// no pending one; after a reopen the same.
func TestRecent(t *testing.T) { eachStore(t, testRecent) }

func testRecent(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	c := newClient(t, srv.URL)
	ob := st.open(t, c)
	for _, id := range []string{"c0", "c1", "c2", "c3", "c4", "pending"} {
		enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
	}
	// Cancelled in an order other than their enqueue order, each a little later.
	for _, id := range []string{"c4", "c1", "c3", "c0", "c2"} {
		if err := ob.Cancel(id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	check := func(ob *Outbox) {
		t.Helper()
		got, err := ob.Recent(3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), []string{"c3", "c0", "c2"}) {
			t.Errorf("Recent(3) = %v, want c3 c0 c2", ids(got))
		}
		all, err := ob.Recent(100)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(all), []string{"c4", "c1", "c3", "c0", "c2"}) {
			t.Errorf("Recent(100) = %v, want c4 c1 c3 c0 c2", ids(all))
		}
		if none, err := ob.Recent(0); err != nil || len(none) != 0 {
			t.Errorf("Recent(0) = %v, %v", ids(none), err)
		}
	}
	check(ob)
	check(st.reopen(t, ob, c))
}

// TestPostgresFinalIndex: tables made before the index of final entries have it added when a
// queue is opened, and Recent reads through it (the plan, with sequential scans off, names it).
func TestPostgresFinalIndex(t *testing.T) {
	dsn := pgtest.DSN(t)
	ob := openPG(t, dsn, "q", nil)
	for _, id := range []string{"e0", "e1", "e2"} {
		enqueue(t, ob, Intent{ID: id, Printer: "p1", Job: job(id)})
		if err := ob.Cancel(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, dsn, `DROP INDEX labelprinter_outbox_entries_final`)
	ob = openPG(t, dsn, "q", nil)
	if got, err := ob.Recent(2); err != nil || !slices.Equal(ids(got), []string{"e1", "e2"}) {
		t.Fatalf("Recent(2) = %v, %v; want e1 e2", ids(got), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `EXPLAIN `+pgRecent, "q", 100)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "labelprinter_outbox_entries_final") {
		t.Errorf("Recent's plan does not use the index:\n%s", strings.Join(plan, "\n"))
	}
}
