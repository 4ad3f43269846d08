package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder runs batches, recording them; while hold is set, each batch waits for release.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	hold    chan struct{} // closed to let held batches go; nil: none held
	started chan struct{} // receives once per batch that began
}

func newRecorder(hold bool) *recorder {
	r := &recorder{started: make(chan struct{}, 100)}
	if hold {
		r.hold = make(chan struct{})
	}
	return r
}

func (r *recorder) run(batch []string) {
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(batch))
	r.mu.Unlock()
	r.started <- struct{}{}
	if r.hold != nil {
		<-r.hold
	}
}

func (r *recorder) got() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// waitFor polls f for up to 10 s.
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !f(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestAloneAtOnce: a call made while no batch is in flight runs at once, alone, in the
// caller's goroutine, and one after the other such calls never wait for company.
func TestAloneAtOnce(t *testing.T) {
	r := newRecorder(false)
	g := New(r.run, nil, 0)
	for _, v := range []string{"a", "b", "c"} {
		if sent, err := g.Do(context.Background(), v); !sent || err != nil {
			t.Fatalf("Do(%q) = %v, %v", v, sent, err)
		}
	}
	if got, want := r.got(), [][]string{{"a"}, {"b"}, {"c"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// TestCallsInFlightGoTogether: the calls made while a batch is in flight go as the next batch,
// in their order, except a second call of a key already in it, and at most max at once; each
// returns only once its own batch ran.
func TestCallsInFlightGoTogether(t *testing.T) {
	r := newRecorder(true)
	g := New(r.run, func(v string) string { return v[:1] }, 3)
	var wg sync.WaitGroup
	returned := make(chan string, 10)
	do := func(v string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sent, err := g.Do(context.Background(), v); !sent || err != nil {
				t.Errorf("Do(%q) = %v, %v", v, sent, err)
			}
			returned <- v
		}()
	}
	do("first")
	<-r.started
	for i, v := range []string{"a1", "b1", "a2", "c1", "d1"} {
		do(v)
		waitFor(t, v+" queued", func() bool { return g.Waiting() == i+1 })
	}
	select {
	case v := <-returned:
		t.Fatalf("%s returned while the batch before it was held", v)
	case <-time.After(20 * time.Millisecond):
	}
	close(r.hold)
	wg.Wait()
	want := [][]string{{"first"}, {"a1", "b1", "c1"}, {"a2", "d1"}}
	if got := r.got(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// TestEndedWhileWaiting: a call whose ctx ends before its batch left is taken out and never
// runs (sent false); one whose ctx ends while its batch is in flight returns at once with
// ctx's error and sent true, and the batch still runs it.
func TestEndedWhileWaiting(t *testing.T) {
	r := newRecorder(true)
	g := New(r.run, nil, 0)
	first := make(chan error, 1)
	go func() { _, err := g.Do(context.Background(), "first"); first <- err }()
	<-r.started

	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() {
		sent, err := g.Do(ctx, "gone")
		if sent {
			err = fmt.Errorf("sent: %v", err)
		}
		out <- err
	}()
	waitFor(t, "gone queued", func() bool { return g.Waiting() == 1 })
	cancel()
	if err := <-out; !errors.Is(err, context.Canceled) {
		t.Fatalf("a call ended while waiting: %v, want context.Canceled and not sent", err)
	}

	// kept leads the next batch; flying rides in it and ends while it is in flight.
	fctx, fcancel := context.WithCancel(context.Background())
	flying := make(chan error, 1)
	kept := make(chan error, 1)
	go func() { _, err := g.Do(context.Background(), "kept"); kept <- err }()
	waitFor(t, "kept queued", func() bool { return g.Waiting() == 1 })
	go func() {
		sent, err := g.Do(fctx, "flying")
		if !sent {
			err = fmt.Errorf("not sent: %v", err)
		}
		flying <- err
	}()
	waitFor(t, "flying queued", func() bool { return g.Waiting() == 2 })
	r.hold <- struct{}{} // first's batch returns; the next leaves
	<-r.started
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	fcancel()
	if err := <-flying; !errors.Is(err, context.Canceled) {
		t.Fatalf("a call ended in flight: %v, want context.Canceled and sent", err)
	}
	close(r.hold)
	if err := <-kept; err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"first"}, {"kept", "flying"}}
	if got := r.got(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// TestLeaderEndedRunsAnyway: a call whose ctx ends as it is handed the next batch returns with
// ctx's error, and the batch runs all the same for the others in it; whether the call itself
// was in it, its answer says (sent). Run many times, since the end and the handing over race.
func TestLeaderEndedRunsAnyway(t *testing.T) {
	for i := 0; i < 50; i++ {
		r := newRecorder(true)
		g := New(r.run, nil, 0)
		first := make(chan error, 1)
		go func() { _, err := g.Do(context.Background(), "first"); first <- err }()
		<-r.started
		ctx, cancel := context.WithCancel(context.Background())
		type answer struct {
			sent bool
			err  error
		}
		lead := make(chan answer, 1)
		go func() { sent, err := g.Do(ctx, "lead"); lead <- answer{sent, err} }()
		waitFor(t, "lead queued", func() bool { return g.Waiting() == 1 })
		other := make(chan error, 1)
		go func() { _, err := g.Do(context.Background(), "other"); other <- err }()
		waitFor(t, "other queued", func() bool { return g.Waiting() == 2 })
		go cancel()
		r.hold <- struct{}{}
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		<-r.started
		close(r.hold)
		if err := <-other; err != nil {
			t.Fatalf("other of a batch whose leader ended: %v", err)
		}
		a := <-lead
		want := [][]string{{"first"}, {"other"}}
		if a.sent {
			want = [][]string{{"first"}, {"lead", "other"}}
		}
		if got := r.got(); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("batches %v, want %v (lead answered %v, %v)", got, want, a.sent, a.err)
		}
	}
}
