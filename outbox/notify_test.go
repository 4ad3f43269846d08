package outbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
	bolt "go.etcd.io/bbolt"
)

// changeLog collects what the WithStateChange callback is given, and notices calls that
// overlap.
type changeLog struct {
	mu      sync.Mutex
	entries []Entry
	inside  atomic.Int32
	overlap atomic.Bool
}

func (c *changeLog) add(e Entry) {
	if c.inside.Add(1) > 1 {
		c.overlap.Store(true)
	}
	defer c.inside.Add(-1)
	c.mu.Lock()
	c.entries = append(c.entries, e)
	c.mu.Unlock()
}

func (c *changeLog) get() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.entries)
}

// steps returns "id state" for each change, in the order they were told.
func steps(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID + " " + string(e.State)
	}
	return out
}

// TestStateChange: the owner hears of every committed change, in commit order, one call at a
// time, the Unknown entries Open found included; calls start with Run.
func TestStateChange(t *testing.T) {
	srv, _ := startSim(t, nil)
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: 503})
	path := filepath.Join(t.TempDir(), "n.outbox")
	ob, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, ob, Intent{ID: "crashed", Printer: "line2", Job: job("crashed")})
	if err := ob.change("crashed", func(r *record) error { r.State, r.Attempts = Sending, 1; return nil }); err != nil {
		t.Fatal(err)
	}
	ob.Close()

	var log changeLog
	ob, err = Open(path, newClient(t, srv.URL), WithRetryInterval(10*time.Millisecond), WithStateChange(log.add))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	for i := range 4 {
		id := fmt.Sprint("j", i)
		enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
	}
	enqueue(t, ob, Intent{ID: "dropped", Printer: "line2", Job: job("dropped")})
	enqueue(t, ob, Intent{ID: "j0", Printer: "line1", Job: job("again")}) // a repeated ID changes nothing
	if err := ob.Cancel("dropped"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // time enough for a call that must not come yet
	if n := len(log.get()); n != 0 {
		t.Fatalf("%d calls before Run", n)
	}
	running(t, ob)
	if _, err := ob.Wait(context.Background(), "j3"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"crashed unknown", "j0 pending", "j1 pending", "j2 pending", "j3 pending", "dropped pending", "dropped cancelled",
		"j0 sending", "j0 pending", // the 503
		"j0 sending", "j0 sent", "j1 sending", "j1 sent", "j2 sending", "j2 sent", "j3 sending", "j3 sent",
	}
	waitFor(t, "every change", func() bool { return len(log.get()) >= len(want) })
	got := log.get()
	if !slices.Equal(steps(got), want) {
		t.Errorf("changes\n%q\nwant\n%q", steps(got), want)
	}
	if log.overlap.Load() {
		t.Error("the callback was called concurrently")
	}
	last := got[len(got)-1]
	if last.Attempts != 1 || last.Job.Description != "j3" || len(last.Response) == 0 || last.Kind != KindPrintJob {
		t.Errorf("j3 sent: %+v", last)
	}
	if got[0].Attempts != 1 || got[0].Error == "" {
		t.Errorf("crashed: %+v", got[0])
	}
}

// TestStateChangeSlowCallback: a callback that does not return holds up neither delivery nor
// Enqueue nor Wait; what it has not taken waits, in order, and Close waits for the rest.
func TestStateChangeSlowCallback(t *testing.T) { eachStore(t, testStateChangeSlowCallback) }

func testStateChangeSlowCallback(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	release := make(chan struct{})
	var log changeLog
	var calls atomic.Int32
	slow := func(e Entry) {
		calls.Add(1)
		<-release
		log.add(e)
	}
	ob := st.open(t, newClient(t, srv.URL), WithStateChange(slow))
	running(t, ob)
	const n = 20
	for i := range n {
		id := fmt.Sprint("s", i)
		enqueue(t, ob, Intent{ID: id, Printer: fmt.Sprint("line", 1+i%2), Job: job(id)})
	}
	for i := range n {
		if e, err := ob.Wait(context.Background(), fmt.Sprint("s", i)); err != nil || e.State != Sent {
			t.Fatalf("s%d: %s, %v", i, e.State, err)
		}
	}
	if c := calls.Load(); c != 1 {
		t.Errorf("%d calls under way at once, want 1 blocked", c)
	}
	close(release)
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	got := log.get()
	if len(got) != 3*n {
		t.Fatalf("%d changes told by the time Close returned, want %d", len(got), 3*n)
	}
	// Per entry: pending, sending, sent; per printer, one entry after the other.
	per := map[string][]string{}
	for _, e := range got {
		per[e.Printer] = append(per[e.Printer], e.ID+" "+string(e.State))
	}
	for p, list := range per {
		var want []string
		for i := range n {
			if fmt.Sprint("line", 1+i%2) == p {
				want = append(want, fmt.Sprint("s", i, " sending"), fmt.Sprint("s", i, " sent"))
			}
		}
		var sends []string
		for _, s := range list {
			if !strings.HasSuffix(s, " pending") {
				sends = append(sends, s)
			}
		}
		if !slices.Equal(sends, want) {
			t.Errorf("%s: %q, want %q", p, sends, want)
		}
	}
}

// TestStateChangeWithoutRun: an outbox that never runs has its changes told by Close.
func TestStateChangeWithoutRun(t *testing.T) { eachStore(t, testStateChangeWithoutRun) }

func testStateChangeWithoutRun(t *testing.T, st testStore) {
	var log changeLog
	ob := st.open(t, nil, WithStateChange(log.add))
	enqueue(t, ob, Intent{ID: "a", Job: job("a")})
	if err := ob.Cancel("a"); err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	if got := steps(log.get()); !slices.Equal(got, []string{"a pending", "a cancelled"}) {
		t.Errorf("changes %q", got)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "n.outbox"), nil, WithStateChange(nil)); !isInvalid(err) {
		t.Errorf("nil callback: %v", err)
	}
}

// TestStateChangeCommitOrder: concurrent writers commit in batches; the calls still come in
// the order of the commits, which the entries' sequence numbers show for Enqueues.
func TestStateChangeCommitOrder(t *testing.T) {
	var log changeLog
	ob, path := openOutbox(t, nil, WithStateChange(log.add))
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := ob.Enqueue(context.Background(), Intent{ID: fmt.Sprint(w, "-", i), Job: job("x")}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	// Writes that fail roll back the batch they joined; bbolt runs the others again in a new
	// transaction. What a rolled-back transaction changed must never be told, and the
	// transaction IDs the notifier orders by must stay without a gap.
	boom := errors.New("boom")
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if err := ob.store.(*boltStore).write(func(*bolt.Tx) error { return boom }); !errors.Is(err, boom) {
					t.Errorf("failing write: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	got := log.get()
	if len(got) != 400 {
		t.Fatalf("%d changes, want 400", len(got))
	}
	// Sequence numbers are taken inside the transactions, so the order of the sequence
	// numbers is the order of the commits.
	ob2, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob2.Close()
	all, _ := ob2.List() // in sequence order
	if !slices.Equal(ids(got), ids(all)) {
		t.Errorf("calls out of commit order:\n%v\nfile order\n%v", ids(got), ids(all))
	}
}

func TestWait(t *testing.T) { eachStore(t, testWait) }

func testWait(t *testing.T, st testStore) {
	srv, rec := startSim(t, nil)
	rec.setDown("line1", true)
	ob := st.open(t, newClient(t, srv.URL))
	enqueue(t, ob, Intent{ID: "later", Printer: "line1", Job: job("later")})
	enqueue(t, ob, Intent{ID: "cancel-me", Printer: "line2", Job: job("c"), ExpireAfter: time.Hour})
	ctx := context.Background()

	if _, err := ob.Wait(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown ID: %v", err)
	}
	//lint:ignore SA1012 a nil context on purpose
	if _, err := ob.Wait(nil, "later"); !isInvalid(err) {
		t.Errorf("nil context: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := ob.Wait(short, "later"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ended context: %v", err)
	}

	// Cancel wakes it, with no Run to commit anything.
	woke := make(chan Entry, 1)
	go func() { e, _ := ob.Wait(ctx, "cancel-me"); woke <- e }()
	waitFor(t, "Wait to register", func() bool { ob.waitMu.Lock(); defer ob.waitMu.Unlock(); return len(ob.waiters["cancel-me"]) == 1 })
	if err := ob.Cancel("cancel-me"); err != nil {
		t.Fatal(err)
	}
	if e := <-woke; e.State != Cancelled {
		t.Errorf("woken by Cancel: %s", e.State)
	}
	// Already settled: at once.
	if e, err := ob.Wait(ctx, "cancel-me"); err != nil || e.State != Cancelled {
		t.Errorf("settled: %s, %v", e.State, err)
	}

	// Run's commits wake it; Pending after a failure does not end it.
	running(t, ob)
	waitFor(t, "a failed attempt", func() bool { e, _ := ob.Get("later"); return e.Attempts >= 1 })
	go func() { e, _ := ob.Wait(ctx, "later"); woke <- e }()
	time.Sleep(20 * time.Millisecond)
	rec.setDown("line1", false)
	if e := <-woke; e.State != Sent {
		t.Errorf("woken by Run: %s", e.State)
	}
	ob.waitMu.Lock()
	left := len(ob.waiters)
	ob.waitMu.Unlock()
	if left != 0 {
		t.Errorf("%d waiters left behind", left)
	}
}

// TestWaitEndsAtClose: Close ends a Wait that would otherwise last.
func TestWaitEndsAtClose(t *testing.T) { eachStore(t, testWaitEndsAtClose) }

func testWaitEndsAtClose(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	enqueue(t, ob, Intent{ID: "x", Job: job("x")})
	errc := make(chan error, 1)
	go func() { _, err := ob.Wait(context.Background(), "x"); errc <- err }()
	waitFor(t, "Wait to register", func() bool { ob.waitMu.Lock(); defer ob.waitMu.Unlock(); return len(ob.waiters["x"]) == 1 })
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Error("Wait returned no error at Close")
	}
}
