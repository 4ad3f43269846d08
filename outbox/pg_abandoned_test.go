package outbox

import (
	"slices"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresRunnerCutOffInATransaction: runner A's host drops off the network in the middle
// of the transaction that takes a lane over, after the server has locked the lane's row for it
// and before A could commit. The server hears nothing more from A; without a rule of its own
// it keeps the transaction open, and the row locked, until it notices the dead connection
// (about two hours with default keepalives), and B, which skips locked lanes, never takes the
// lane. Ended by the server once it has waited longer than the lease, the transaction rolls
// back: B takes the lane and sends its entry, once, in order.
func TestPostgresRunnerCutOffInATransaction(t *testing.T) {
	// Statements neither prepared nor described first: each goes with its text in the write
	// that runs it, and the cut below is made where the take's runs.
	dsn := pgtest.WithParam(pgtest.DSN(t), "default_query_exec_mode", "exec")
	srv, rec := startSim(t, nil)
	const ttl = time.Second
	a := startCutRunner(t, dsn, srv.URL, ttl)
	b := startCutRunner(t, dsn, srv.URL, ttl)
	// line2's lane row is there already, so that A's take locks it rather than inserting it.
	sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_lanes (queue, printer) VALUES ('q', 'line2')`)
	running(t, a.ob)
	enqueue(t, a.ob, Intent{ID: "e1", Printer: "line1", Job: job("e1")})
	waitState(t, a.ob, "e1", Sent)

	// The take's lock of line2's row reaches the server; the link dies there.
	cut := a.db.SetAfter([]byte("FOR UPDATE SKIP LOCKED"), faultproxy.Blackhole)
	enqueue(t, b.ob, Intent{ID: "e2", Printer: "line2", Job: job("e2")})
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("A did not begin taking line2")
	}
	running(t, b.ob)
	start := time.Now()
	e := waitStateWithin(t, b.ob, "e2", Sent, 30*time.Second)
	t.Logf("B sent e2 %v after A was cut off inside its transaction", time.Since(start).Round(time.Millisecond))
	if e.Attempts != 1 {
		t.Errorf("e2 took %d attempts, want 1", e.Attempts)
	}
	enqueue(t, b.ob, Intent{ID: "e3", Printer: "line2", Job: job("e3")})
	waitState(t, b.ob, "e3", Sent)
	if got, want := rec.received(), []string{"e1", "e2", "e3"}; !slices.Equal(got, want) {
		t.Errorf("the printer printed %v, want %v", got, want)
	}
}

// TestPostgresClaimAnswerLost: runner A's claim of e2 reaches the server and A's host drops off
// the network before the answer comes back. The claim is one statement, committed on its own:
// e2 is Sending, A never hears so and never sends it, and B, once A's lease has run out,
// takes the lane and makes e2 Unknown (it may not tell that the request never left) and goes
// on with e3. When A's links are back, it sends nothing of the lane: the printer gets e1 and
// e3, once each.
func TestPostgresClaimAnswerLost(t *testing.T) {
	// Statements neither prepared nor described first: the claim goes with its text in the
	// write that runs it, and the cut below is made where it runs.
	dsn := pgtest.WithParam(pgtest.DSN(t), "default_query_exec_mode", "exec")
	srv, rec := startSim(t, nil)
	const ttl = time.Second
	a := startCutRunner(t, dsn, srv.URL, ttl)
	b := startCutRunner(t, dsn, srv.URL, ttl)
	running(t, a.ob)
	enqueue(t, a.ob, Intent{ID: "e1", Printer: "line1", Job: job("e1")})
	waitState(t, a.ob, "e1", Sent)
	running(t, b.ob) // stands by: the lane is A's

	cut := a.db.SetAfter([]byte("SET in_flight = $3"), faultproxy.Blackhole)
	enqueue(t, b.ob, Intent{ID: "e2", Printer: "line1", Job: job("e2")})
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("A did not begin claiming e2")
	}
	e := waitStateWithin(t, b.ob, "e2", Unknown, 30*time.Second)
	if e.Attempts != 1 {
		t.Errorf("e2 has %d attempts, want 1: A's claim was committed", e.Attempts)
	}
	enqueue(t, b.ob, Intent{ID: "e3", Printer: "line1", Job: job("e3")})
	waitState(t, b.ob, "e3", Sent)
	a.heal()
	time.Sleep(3 * ttl) // A's next looks at the lanes, with its links back
	if got, want := rec.received(), []string{"e1", "e3"}; !slices.Equal(got, want) {
		t.Errorf("the printer printed %v, want %v", got, want)
	}
	if e, err := b.ob.Get("e2"); err != nil || e.State != Unknown {
		t.Errorf("e2 after A's links are back: %+v, %v; want unknown", e, err)
	}
}
