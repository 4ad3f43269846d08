package outbox

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// unackedIDs returns the IDs Unacknowledged returns, in its order.
func unackedIDs(t testing.TB, ob *Outbox) []string {
	t.Helper()
	es, err := ob.Unacknowledged()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

// heardIDs is a WithStateChange that keeps the IDs and states it hears.
type heardIDs struct {
	mu    sync.Mutex
	heard []string
}

func (h *heardIDs) option() Option {
	return WithStateChange(func(e Entry) {
		h.mu.Lock()
		h.heard = append(h.heard, e.ID+" "+string(e.State))
		h.mu.Unlock()
	})
}

func (h *heardIDs) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.heard)
}

// planUses reports whether the plan of Unacknowledged's statement, with sequential scans off,
// reads through the index of unacknowledged entries, and returns the plan.
func planUses(t testing.TB, dsn string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `EXPLAIN SELECT `+pgCols+` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND `+pgUnacked+` ORDER BY seq`, "q")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	return strings.Contains(p, "labelprinter_outbox_entries_unacked"), p
}

// TestPostgresAcknowledged: a queue in PostgreSQL keeps acknowledgements as a file does.
// Unacknowledged returns the settled entries not acknowledged in their current state (not the
// pending one, nor those acknowledged), and the same after the queue is opened again; an ack
// of another state or attempts, or of an ID the queue does not hold, changes nothing; the
// statement reads through the index of unacknowledged entries; and an acknowledgement is told
// to no WithStateChange, here or in another Outbox of the queue; 1,103 entries acknowledged in
// one call (more than one statement's) are all acknowledged. Before, the queue kept no
// acknowledgements and returned every settled entry.
func TestPostgresAcknowledged(t *testing.T) {
	dsn := pgtest.DSN(t)
	var other heardIDs
	watcher := openPG(t, dsn, "q", nil, other.option())
	ob := openPG(t, dsn, "q", nil)
	for _, id := range []string{"a", "b", "c", "d", "pending"} {
		enqueue(t, ob, Intent{ID: id, Printer: "p1", Job: job(id)})
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := ob.Cancel(id); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := unackedIDs(t, ob), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("Unacknowledged() = %v, want %v", got, want)
	}
	if err := ob.Acknowledge(Ack{ID: "a", State: Cancelled}, Ack{ID: "c", State: Cancelled},
		Ack{ID: "b", State: Cancelled, Attempts: 1}, Ack{ID: "d", State: Sent}, Ack{ID: "x", State: Cancelled},
		Ack{ID: "pending", State: Pending}); err != nil {
		t.Fatal(err)
	}
	want := []string{"b", "d"}
	if got := unackedIDs(t, ob); !slices.Equal(got, want) {
		t.Errorf("after acknowledging a and c: Unacknowledged() = %v, want %v", got, want)
	}
	if err := ob.Cancel("pending"); err != nil { // the last change, after the acknowledgements
		t.Fatal(err)
	}
	ob.Close()
	watcher.Close()
	if got, want := other.get(), []string{"a pending", "b pending", "c pending", "d pending", "pending pending",
		"a cancelled", "b cancelled", "c cancelled", "d cancelled", "pending cancelled"}; !slices.Equal(got, want) {
		t.Errorf("another Outbox heard %v, want %v: an acknowledgement is no change of state", got, want)
	}
	ob = openPG(t, dsn, "q", nil)
	if got, want := unackedIDs(t, ob), []string{"b", "d", "pending"}; !slices.Equal(got, want) {
		t.Errorf("opened again: Unacknowledged() = %v, want %v", got, want)
	}
	if ok, plan := planUses(t, dsn); !ok {
		t.Errorf("Unacknowledged's plan does not use the index:\n%s", plan)
	}

	// A history longer than one statement's acks, acknowledged in one call.
	sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_entries (queue, id, printer, kind, expire_after, state, error)
		SELECT 'q', 'h' || i, 'p1', 'deselect', 1, 'expired', '' FROM generate_series(1, 1100) AS i`)
	es, err := ob.Unacknowledged()
	if err != nil || len(es) != 1103 {
		t.Fatalf("Unacknowledged() with the history: %d entries, %v", len(es), err)
	}
	acks := make([]Ack, len(es))
	for i, e := range es {
		acks[i] = Ack{ID: e.ID, State: e.State, Attempts: e.Attempts}
	}
	if err := ob.Acknowledge(acks...); err != nil {
		t.Fatal(err)
	}
	if got := unackedIDs(t, ob); len(got) != 0 {
		t.Errorf("after acknowledging 1,103 entries in one call, %d are left: %.5v", len(got), got)
	}
}

// TestPostgresAcknowledgedOldTables: tables made by a version before acknowledgements
// (testdata/pg_schema_before_acks.sql, with entries written as that version writes them)
// have the column, its index and the trigger's function added when a queue is opened; every
// settled entry is unacknowledged until acknowledged, Unacknowledged reads through the index,
// an acknowledgement is told to nobody, and a change written as that version writes it (a
// cancel of an unknown entry acknowledged as unknown) leaves the entry unacknowledged in its
// new state.
func TestPostgresAcknowledgedOldTables(t *testing.T) {
	dsn := pgtest.DSN(t)
	old, err := os.ReadFile("testdata/pg_schema_before_acks.sql")
	if err != nil {
		t.Fatal(err)
	}
	sqlExec(t, dsn, string(old))
	for _, e := range []struct {
		id, state string
		attempts  int
	}{{"sent", "sent", 1}, {"unknown", "unknown", 1}, {"pending", "pending", 0}, {"expired", "expired", 0}} {
		sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_entries (queue, id, printer, kind, job, expire_after, state, attempts, error, enqueued, updated)
			VALUES ('q', $1, 'p1', 'printJob', '{"labelName":"L"}', $2, $3, $4, '', now() - interval '1 hour', now() - interval '1 hour')`, e.id, int64(time.Hour), e.state, e.attempts)
	}
	var heard heardIDs
	ob := openPG(t, dsn, "q", nil, heard.option())
	if got, want := unackedIDs(t, ob), []string{"sent", "unknown", "expired"}; !slices.Equal(got, want) {
		t.Fatalf("Unacknowledged() of the old tables = %v, want %v", got, want)
	}
	if err := ob.Acknowledge(Ack{ID: "sent", State: Sent, Attempts: 1}, Ack{ID: "unknown", State: Unknown, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := unackedIDs(t, ob), []string{"expired"}; !slices.Equal(got, want) {
		t.Errorf("after acknowledging two: Unacknowledged() = %v, want %v", got, want)
	}
	// The version before cancels as this one does, with its own statement, which knows no
	// acknowledgements.
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_entries SET state = 'cancelled', attempts = 1, error = '', response = NULL,
		updated = greatest(now(), updated + interval '1 microsecond') WHERE queue = 'q' AND id = 'unknown'`)
	if got, want := unackedIDs(t, ob), []string{"unknown", "expired"}; !slices.Equal(got, want) {
		t.Errorf("after the version before cancelled an acknowledged entry: Unacknowledged() = %v, want %v", got, want)
	}
	ob.Close() // tells what it heard, once every change committed before is heard
	if got, want := heard.get(), []string{"unknown cancelled"}; !slices.Equal(got, want) {
		t.Errorf("heard %v, want %v: an acknowledgement is no change of state", got, want)
	}
	if ok, plan := planUses(t, dsn); !ok {
		t.Errorf("Unacknowledged's plan does not use the index:\n%s", plan)
	}
}
