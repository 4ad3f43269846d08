package outbox

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresLateAcquireWaitsForRenewal: a runner's link to PostgreSQL freezes while its
// acquire of a lane is in flight, and thaws after 4/5 of the lease: the lane is its by the
// database, but the answer came too late to be sure of it. The runner keeps running, renews at
// once, and acts only after a renewal that came back in time. Here the answer to the entry's
// claim (a renewal of its own) comes back late too, and the link then stays too slow for any
// answer to come back in time: that request must not be written (the entry goes back to
// Pending, "not written"), and once the link is well, a renewal in time sends it, once.
func TestPostgresLateAcquireWaitsForRenewal(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	const (
		ttl    = time.Second
		frozen = ttl*4/5 + 100*time.Millisecond // past the holder's deadline, before the database's
	)
	// Each statement goes out in one write with its text (no statement prepared first), so the
	// proxy can stop the link right after a given statement has reached the server.
	b := startCutRunner(t, pgtest.WithParam(dsn, "default_query_exec_mode", "exec"), srv.URL, ttl)
	enqueue(t, b.ob, Intent{ID: "x", Printer: "line1", Job: job("x")})
	// The acquire's first statement reaches the database; its answer, and the rest of the
	// acquire, wait.
	acquire := b.db.SetAfter([]byte("INSERT INTO labelprinter_outbox_lanes"), faultproxy.Freeze)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.ob.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	stillRunning := func(when string) {
		t.Helper()
		select {
		case err := <-errc:
			errc <- err
			t.Fatalf("Run returned %v %s", err, when)
		default:
		}
	}
	select {
	case <-acquire:
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not try to acquire line1's lane")
	}
	time.Sleep(frozen)
	if got := rec.received(); len(got) != 0 {
		t.Fatalf("the printer got %v while the acquire was frozen", got)
	}
	// The acquire comes back late. Once the runner's claim of x (one statement: it renews the
	// lease and commits x Sending) has reached the database, the link freezes again past 4/5 of
	// the lease and then turns so slow that no answer comes back in time: the claim's answer
	// comes back late, and so does every renewal meanwhile.
	claim := b.db.SetAfter([]byte("SET in_flight = $3"), faultproxy.Freeze)
	b.db.Set(faultproxy.Pass)
	select {
	case <-claim:
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not claim x after its late acquire")
	}
	time.Sleep(frozen)
	b.db.SetDelay(ttl * 9 / 20) // each way: a round trip takes 9/10 of the lease
	b.db.Set(faultproxy.Pass)
	time.Sleep(3 * ttl)
	stillRunning("after its acquire came back late")
	if got := rec.received(); len(got) != 0 {
		t.Fatalf("the printer got %v before a renewal came back in time", got)
	}
	b.db.SetDelay(0)
	e := waitState(t, b.ob, "x", Sent)
	stillRunning("after it sent x")
	if got := rec.received(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("the printer got %v, want x once", got)
	}
	if e.Attempts != 2 {
		t.Errorf("x: %d attempts, want 2 (one stopped by its late renewal, one sent)", e.Attempts)
	}
	if !strings.Contains(b.log(), `id=x printer=line1 written="not written"`) {
		t.Errorf("the runner did not log that x's first request was stopped before it was written; log:\n%s", b.log())
	}
}
