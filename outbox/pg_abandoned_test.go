package outbox

import (
	"slices"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresRunnerCutOffInATransaction: runner A's host drops off the network in the middle
// of the transaction that claims an entry, after the server has locked the lane's row for it
// and before A could commit. The server hears nothing more from A; without a rule of its own
// it keeps the transaction open, and the row locked, until it notices the dead connection
// (about two hours with default keepalives), and B, which skips locked lanes, never takes the
// lane over. Ended by the server once it has waited longer than the lease, the transaction
// rolls back: the entry was never committed Sending, so B sends it, once, in order.
func TestPostgresRunnerCutOffInATransaction(t *testing.T) {
	// Statements described, not prepared: the claim's text goes with every claim, and the cut
	// below is made where it passes.
	dsn := pgtest.WithParam(pgtest.DSN(t), "default_query_exec_mode", "cache_describe")
	srv, rec := startSim(t, nil)
	const ttl = time.Second
	a := startCutRunner(t, dsn, srv.URL, ttl)
	b := startCutRunner(t, dsn, srv.URL, ttl)
	running(t, a.ob)
	enqueue(t, a.ob, Intent{ID: "e1", Printer: "line1", Job: job("e1")})
	waitState(t, a.ob, "e1", Sent)
	running(t, b.ob) // stands by: the lane is A's

	// The claim's first batch locks the lane's row; the link dies as it reaches the server.
	cut := a.db.SetAfter([]byte("SET in_flight = $3"), faultproxy.Blackhole)
	enqueue(t, b.ob, Intent{ID: "e2", Printer: "line1", Job: job("e2")})
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("A did not begin claiming e2")
	}
	start := time.Now()
	e := waitStateWithin(t, b.ob, "e2", Sent, 30*time.Second)
	t.Logf("B sent e2 %v after A was cut off inside its transaction", time.Since(start).Round(time.Millisecond))
	if e.Attempts != 1 {
		t.Errorf("e2 took %d attempts, want 1: A never committed its claim", e.Attempts)
	}
	enqueue(t, b.ob, Intent{ID: "e3", Printer: "line1", Job: job("e3")})
	waitState(t, b.ob, "e3", Sent)
	if got, want := rec.received(), []string{"e1", "e2", "e3"}; !slices.Equal(got, want) {
		t.Errorf("the printer printed %v, want %v", got, want)
	}
}
