package outbox

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

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
