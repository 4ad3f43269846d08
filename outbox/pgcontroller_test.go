package outbox

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// openErr opens queue with c and returns the error, closing an Outbox that opened.
func openErr(t *testing.T, dsn, queue string, c *labelprinter.Client) error {
	t.Helper()
	ob, err := OpenPostgres(context.Background(), dsn, queue, c)
	if err == nil {
		_ = ob.Close()
	}
	return err
}

// TestPostgresQueueController: a queue belongs to the controller of the first client that
// opens it; the same controller spelt otherwise opens it, a client of another controller is
// refused with a ControllerError naming both URLs (an ErrInvalidArgument, nothing sent), and
// an Outbox without a client neither records nor is refused. Before, a Run with any client
// delivered the queue's entries to it and reported them sent.
func TestPostgresQueueController(t *testing.T) {
	dsn := pgtest.DSN(t)
	srvA, recA := startSim(t, nil)
	srvB, recB := startSim(t, nil)
	// Filled without a client: nothing recorded yet.
	filler := openPG(t, dsn, "q", nil)
	enqueue(t, filler, Intent{ID: "o1", Job: job("o1")})
	if err := openErr(t, dsn, "q", newClient(t, srvA.URL)); err != nil {
		t.Fatal(err)
	}
	if err := openErr(t, dsn, "q", newClient(t, strings.Replace(srvA.URL, "http://", "HTTP://", 1)+"/")); err != nil {
		t.Fatalf("the same controller spelt otherwise: %v", err)
	}
	ob, err := OpenPostgres(context.Background(), dsn, "q", newClient(t, srvB.URL))
	if err == nil {
		t.Cleanup(func() { ob.Close() })
		running(t, ob)
		waitState(t, ob, "o1", Sent)
		t.Fatalf("a client of %s opened the queue of %s and delivered o1 there (%d printJobs at B)", srvB.URL, srvA.URL, recB.counts()["o1"])
	}
	var ce *ControllerError
	if !errors.As(err, &ce) || !errors.Is(err, labelprinter.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), srvA.URL) || !strings.Contains(err.Error(), srvB.URL) {
		t.Fatalf("OpenPostgres with another controller: %v; want a ControllerError naming %s and %s", err, srvA.URL, srvB.URL)
	}
	if ce.Queue != "q" || ce.Recorded != srvA.URL || ce.Given != srvB.URL {
		t.Errorf("ControllerError %+v", ce)
	}
	if err := openErr(t, dsn, "q", nil); err != nil {
		t.Errorf("without a client: %v", err)
	}
	if n := recA.counts()["o1"] + recB.counts()["o1"]; n != 0 {
		t.Errorf("o1 reached a printer %d times; nothing ran", n)
	}
	// Another queue is another controller's.
	if err := openErr(t, dsn, "q2", newClient(t, srvB.URL)); err != nil {
		t.Errorf("queue q2 for B: %v", err)
	}
}

// TestPostgresQueueControllerAdopted: a queue made before controllers were recorded (its row
// gone, as in tables of then) takes the controller of the first client that opens it; of two
// clients of different controllers opening a new queue at once, one is refused.
func TestPostgresQueueControllerAdopted(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := "http://127.0.0.1:1", "http://127.0.0.1:2"
	if err := openErr(t, dsn, "old", newClient(t, a)); err != nil {
		t.Fatal(err)
	}
	sqlExec(t, dsn, `DELETE FROM labelprinter_outbox_queues`)
	if err := openErr(t, dsn, "old", newClient(t, b)); err != nil {
		t.Fatalf("a queue without a recorded controller: %v", err)
	}
	if err := openErr(t, dsn, "old", newClient(t, a)); !errors.Is(err, labelprinter.ErrInvalidArgument) {
		t.Fatalf("after it took %s, a client of %s: %v; want refused", b, a, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, u := range []string{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = openErr(t, dsn, "new", newClient(t, u)) }()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Errorf("two controllers opening one new queue at once: %v, %v; want exactly one refused", errs[0], errs[1])
	}
}
