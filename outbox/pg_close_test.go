package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// closeSilentBound is what TestPostgresCloseServerSilent allows Close: each wait on its way
// has its own bound (releaseTimeout, 2 s; the shared store's flush, 3 s; poolCloseWait, 1 s),
// 6 s in all when each runs out, and the rest is the machine's: 2.5 s were measured on an idle
// one, over 5 s once under a load average of 20.
const closeSilentBound = 10 * time.Second

// TestPostgresCloseServerSilent: a server that stops answering without closing its
// connections does not hold up Close: Run's look at the lanes is cut short, giving up the
// leases is best effort (a lease not given up runs out on its own), and Close returns within
// a few seconds, Run with it.
func TestPostgresCloseServerSilent(t *testing.T) {
	srvPG := pgtest.Own(t)
	srv, _ := startSim(t, nil)
	ob := openPG(t, srvPG.AdminDSN(), "q", newClient(t, srv.URL))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- ob.Run(ctx) }()
	enqueue(t, ob, Intent{ID: "before", Printer: "line1", Job: job("before")})
	ctxW, cancelW := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelW()
	if e, err := ob.Wait(ctxW, "before"); err != nil || e.State != Sent {
		t.Fatalf("before: %+v, %v", e, err)
	}

	defer freezeServer(t, ob)()
	// Past a poll: Run now waits for the database's answer to its look at the lanes.
	time.Sleep(1500 * time.Millisecond)
	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- ob.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close with the server silent returned %v after %v", err, time.Since(start).Round(time.Millisecond))
	case <-time.After(closeSilentBound):
		t.Fatalf("Close with the server silent did not return within %v", closeSilentBound)
	}
	select {
	case err := <-ran:
		t.Logf("Run returned %v", err)
	case <-time.After(time.Second):
		t.Fatal("Run did not return after Close returned")
	}
}
