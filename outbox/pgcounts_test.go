package outbox

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// countAll counts the queue's entries by printer and state over the whole table, as Counts
// did before the counts were kept.
func countAll(t testing.TB, conn *pgx.Conn, queue string) map[string]map[State]int {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT printer, state, count(*) FROM labelprinter_outbox_entries
		WHERE queue = $1 AND pruned IS NULL GROUP BY printer, state`, queue)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[State]int{}
	var (
		printer, state string
		n              int
	)
	if _, err := pgx.ForEachRow(rows, []any{&printer, &state, &n}, func() error {
		if out[printer] == nil {
			out[printer] = map[State]int{}
		}
		out[printer][State(state)] = n
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPostgresCounts: Counts of a queue in PostgreSQL equals a count of its whole table
// after every kind of write, by this Outbox or by a statement of another writer (a version
// before, a person): adds, cancels, a delivery, Prune, ForgetIDs, final entries inserted,
// changed and deleted by hand, changed by a session whose search_path names another schema, in
// two queues at once; and its plan, on 2,000 final entries
// and 3 open ones, reads the entries through the index of open entries alone, no scan of the
// table. Before, Counts grouped every entry of the queue.
func TestPostgresCounts(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, _ := startSimWith(t, nil, "p1", "p2")
	ob := openPG(t, dsn, "q", newClient(t, srv.URL))
	other := openPG(t, dsn, "other", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string) {
		t.Helper()
		for queue, o := range map[string]*Outbox{"q": ob, "other": other} {
			got, err := o.Counts()
			if err != nil {
				t.Fatal(err)
			}
			if want := countAll(t, conn, queue); !maps.EqualFunc(got, want, maps.Equal) {
				t.Errorf("after %s: Counts() of %s = %v, want %v", step, queue, got, want)
			}
		}
	}
	for i, id := range []string{"a", "b", "c", "d", "e", "f"} {
		enqueue(t, ob, Intent{ID: id, Printer: []string{"p1", "p2"}[i%2], Job: job(id)})
		enqueue(t, other, Intent{ID: id, Printer: "p1", Job: job(id)})
	}
	check("adds")
	for _, id := range []string{"a", "b", "c"} {
		if err := ob.Cancel(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Cancel("a"); err != nil {
		t.Fatal(err)
	}
	check("cancels")
	running(t, ob)
	for _, id := range []string{"d", "e", "f"} {
		waitState(t, ob, id, Sent)
	}
	check("deliveries")
	if n, err := ob.Prune(0); err != nil || n != 6 {
		t.Fatalf("Prune: %d, %v", n, err)
	}
	check("prune")
	if _, err := ob.ForgetIDs(0); err != nil {
		t.Fatal(err)
	}
	check("forget")
	exec(`INSERT INTO labelprinter_outbox_entries (queue, id, printer, kind, expire_after, state, error)
		SELECT q, q || '-' || i, 'p' || (i % 3), 'deselect', 1, CASE WHEN i % 2 = 0 THEN 'expired' ELSE 'rejected' END, ''
		FROM generate_series(1, 1000) AS i, unnest(ARRAY['q', 'other']) AS q`)
	check("final entries inserted by hand")
	exec(`UPDATE labelprinter_outbox_entries SET state = 'sent' WHERE state = 'rejected' AND id LIKE '%0'`)
	check("final entries changed by hand")
	exec(`DELETE FROM labelprinter_outbox_entries WHERE state = 'expired' AND id LIKE '%2'`)
	check("final entries deleted by hand")
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	elsewhere, err := pgx.Connect(ctx, pgtest.WithParam(dsn, "search_path", "public"))
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close(context.Background())
	if _, err := elsewhere.Exec(ctx, `UPDATE `+pgx.Identifier{schema, "labelprinter_outbox_entries"}.Sanitize()+`
		SET state = 'cancelled' WHERE queue = 'other' AND state = 'pending'`); err != nil {
		t.Fatal(err)
	}
	check("a cancel by a session whose search_path names another schema")

	for _, id := range []string{"x", "y", "z"} {
		enqueue(t, other, Intent{ID: id, Printer: "p1", Job: job(id)})
	}
	exec(`ANALYZE labelprinter_outbox_entries`)
	rows, err := conn.Query(ctx, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) `+pgCounts, "q")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	if strings.Contains(p, "Seq Scan on labelprinter_outbox_entries") || !strings.Contains(p, "labelprinter_outbox_entries_unsettled") {
		t.Errorf("Counts does not read the entries through the index of open ones alone:\n%s", p)
	}
}

// TestPostgresCountsOldTables: tables made before the counts were kept, with entries of every
// kind, some pruned, have the table of final counts added and filled when a queue is opened,
// and Counts equals a count of the whole table then and after a change.
func TestPostgresCountsOldTables(t *testing.T) {
	dsn := pgtest.DSN(t)
	old, err := os.ReadFile("testdata/pg_schema_before_acks.sql")
	if err != nil {
		t.Fatal(err)
	}
	sqlExec(t, dsn, string(old))
	sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_entries (queue, id, printer, kind, expire_after, state, error, pruned)
		SELECT 'q', 'e' || i, 'p1', 'deselect', 1, (ARRAY['pending', 'sent', 'expired', 'unknown'])[i % 4 + 1], '',
			CASE WHEN i % 10 = 0 THEN now() END
		FROM generate_series(1, 40) AS i`)
	ob := openPG(t, dsn, "q", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var kept bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_counts') IS NOT NULL`).Scan(&kept); err != nil || !kept {
		t.Errorf("the open added no table of final counts (%v)", err)
	}
	for _, step := range []string{"the open", "a cancel"} {
		if step == "a cancel" {
			if err := ob.Cancel("e4"); err != nil { // pending
				t.Fatal(err)
			}
		}
		got, err := ob.Counts()
		if err != nil {
			t.Fatal(err)
		}
		if want := countAll(t, conn, "q"); !maps.EqualFunc(got, want, maps.Equal) || got["p1"][Sent] == 0 {
			t.Errorf("after %s: Counts() of the old tables = %v, want %v", step, got, want)
		}
	}
}
