package outbox

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// countingSyncs is a queue in PostgreSQL that counts the Run's looks at the lanes.
type countingSyncs struct {
	*pgStore
	looks atomic.Int64
}

func (c *countingSyncs) sync(ctx context.Context, inFlight func(seq uint64) bool) (laneState, error) {
	c.looks.Add(1)
	return c.pgStore.sync(ctx, inFlight)
}

// TestPostgresHeldLaneNeedsNoLook: entries enqueued one after another by the Outbox whose Run
// holds their lane are delivered, in order and once each, with no look at the lanes beyond
// the Run's poll (one a second): each is indexed as it is added. Before, every entry added
// (and its own notification) asked for a look, five statements, and the deliveries waited
// for it.
func TestPostgresHeldLaneNeedsNoLook(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSimWith(t, nil, "p1")
	ob := openPG(t, dsn, "q", newClient(t, srv.URL))
	cs := &countingSyncs{pgStore: ob.store.(*pgStore)}
	ob.store = cs
	running(t, ob)
	sent := func(id string) {
		t.Helper()
		waitFor(t, id+" sent", func() bool {
			e, err := ob.Get(id)
			return err == nil && e.State == Sent
		})
	}
	enqueue(t, ob, Intent{ID: "first", Printer: "p1", Job: job("first")})
	sent("first") // the lane is taken by a look at the lanes
	const n = 30
	start, before := time.Now(), cs.looks.Load()
	want := []string{"first"}
	for i := range n {
		id := fmt.Sprintf("e%02d", i)
		want = append(want, id)
		enqueue(t, ob, Intent{ID: id, Printer: "p1", Job: job(id)})
		sent(id)
	}
	looks, took := cs.looks.Load()-before, time.Since(start)
	// The poll's looks, one a second, and a few renewals that came back late on a busy machine.
	if bound := int64(took/time.Second) + 5; looks > bound {
		t.Errorf("%d looks at the lanes while %d entries were added and sent in %v, want at most %d: each entry asked for one",
			looks, n, took.Round(time.Millisecond), bound)
	}
	if got := rec.received(); !slices.Equal(got, want) {
		t.Errorf("the printer received %v, want %v", got, want)
	}
	t.Logf("%d looks at the lanes for %d entries in %v", looks, n, took.Round(time.Millisecond))
}

// TestPostgresUnsettledIndex: tables made before the index of pending, sending and unknown
// entries have it added when a queue is opened; List of those states reads through it (the
// plan, with sequential scans off, names it: the query's condition matches the index's), and
// Counts agrees with the entries.
func TestPostgresUnsettledIndex(t *testing.T) {
	dsn := pgtest.DSN(t)
	ob := openPG(t, dsn, "q", nil)
	for i := range 6 {
		enqueue(t, ob, Intent{ID: fmt.Sprintf("e%d", i), Printer: []string{"p1", "p2"}[i%2], Job: job("x")})
	}
	if err := ob.Cancel("e0"); err != nil {
		t.Fatal(err)
	}
	counts, err := ob.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]map[State]int{"p1": {Pending: 2, Cancelled: 1}, "p2": {Pending: 3}}; !maps.EqualFunc(counts, want, maps.Equal) {
		t.Errorf("Counts() = %v, want %v", counts, want)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}

	sqlExec(t, dsn, `DROP INDEX labelprinter_outbox_entries_unsettled`)
	ob = openPG(t, dsn, "q", nil)
	if open, err := ob.List(Pending, Unknown); err != nil || len(open) != 5 {
		t.Fatalf("List(pending, unknown): %d entries, %v", len(open), err)
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
	rows, err := conn.Query(ctx, `EXPLAIN SELECT `+pgCols+` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND state IN ('pending', 'sending', 'unknown') AND pruned IS NULL AND state = ANY($2) ORDER BY seq`,
		"q", []string{"pending", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "labelprinter_outbox_entries_unsettled") {
		t.Errorf("the listing's plan does not use the index:\n%s", strings.Join(plan, "\n"))
	}
}
