package outbox

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresLateOutcomeAfterResend: a Run that lost its lane while its request was out
// (paused past its lease, say) comes back with the answer after a person resent the entry and
// another Run sent it again. The late answer is the first attempt's: it leaves the second
// attempt's Sending, and that attempt's outcome, alone.
func TestPostgresLateOutcomeAfterResend(t *testing.T) {
	t.Parallel() // it mostly waits, on a simulator, processes and a schema or server of its own
	dsn := pgtest.DSN(t)
	a := openPG(t, dsn, "q", nil)
	b := openPG(t, dsn, "q", nil)
	sa, sb := a.store.(*pgStore), b.store.(*pgStore)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	none := func(uint64) bool { return false }
	enqueue(t, a, Intent{ID: "x", Printer: "line1", Job: job("x")})
	r, err := sa.lookup(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	it := &item{id: "x", seq: r.Seq, printer: "line1"}
	if st, err := sa.sync(ctx, none); err != nil || len(st.held) != 1 {
		t.Fatalf("A's sync: %+v, %v", st, err)
	}
	first, err := sa.begin(ctx, it, time.Time{}, beginRule)
	if err != nil || first == nil {
		t.Fatalf("A's begin: %v, %v", first, err)
	}
	// A's lease runs out; B takes the lane, and the entry is Unknown; a person resends it and
	// B sends it again.
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_lanes SET lease_until = now() - interval '1 second'`)
	if st, err := sb.sync(ctx, none); err != nil || len(st.unknown) != 1 {
		t.Fatalf("B's sync: %+v, %v", st, err)
	}
	if err := b.Resend("x"); err != nil {
		t.Fatal(err)
	}
	second, err := sb.begin(ctx, it, time.Time{}, beginRule)
	if err != nil || second == nil {
		t.Fatalf("B's begin: %v, %v", second, err)
	}
	// A's late answer: Sent.
	late := *first
	late.State = Sent
	if err := sa.finish(ctx, &late); !errors.Is(err, errLateOutcome) {
		t.Fatalf("the first attempt's late answer: %v, want errLateOutcome", err)
	}
	if e, err := b.Get("x"); err != nil || e.State != Sending || e.Attempts != 2 {
		t.Fatalf("after the first attempt's late answer: %s, %d attempts, %v; want the second attempt's sending", e.State, e.Attempts, err)
	}
	done := *second
	done.State, done.Error = Rejected, "400"
	if err := sb.finish(ctx, &done); err != nil {
		t.Fatal(err)
	}
	if e, err := b.Get("x"); err != nil || e.State != Rejected {
		t.Errorf("after the second attempt's answer: %s, %v; want rejected", e.State, err)
	}
}

// TestPostgresLateAnswerLogged: the answer to a request that was out when another Run took the
// lane over is logged as a late answer, not as the entry's new state: the entry stays Unknown,
// and the log line tells the person deciding about it what the printer answered.
func TestPostgresLateAnswerLogged(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	held, release := make(chan struct{}), make(chan struct{})
	releaseJob := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseJob) // before the simulator's Close, which waits for the held job
	rec.setOnJob(func(desc string, serve func()) bool {
		if desc == "first" {
			close(held)
			<-release
		}
		serve()
		return true
	})
	var logMu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	a := openPG(t, dsn, "q", newClient(t, srv.URL), WithLogger(logger))
	b := openPG(t, dsn, "q", nil)
	enqueue(t, a, Intent{ID: "first", Printer: "line1", Job: job("first")})
	running(t, a)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not arrive")
	}
	// A's lease runs out while its request is at the printer, and B takes the lane: B's look at
	// it finds the entry Sending with no request of its own on the way.
	sb := b.store.(*pgStore)
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_lanes SET owner = $1, lease_until = now() + interval '1 hour'`, sb.owner)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := sb.sync(ctx, func(uint64) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if e, _ := b.Get("first"); e.State != Unknown {
		t.Fatalf("first after the takeover: %s", e.State)
	}
	releaseJob()
	deadline := time.Now().Add(10 * time.Second)
	for {
		logMu.Lock()
		text := logs.String()
		logMu.Unlock()
		if strings.Contains(text, "state=sent") {
			t.Fatalf("the late answer was logged as the entry's state:\n%s", text)
		}
		if strings.Contains(text, "answer came after") && strings.Contains(text, "id=first") && strings.Contains(text, "answer=sent") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line about the late answer:\n%s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e, _ := b.Get("first"); e.State != Unknown {
		t.Errorf("first after the late answer: %s, want unknown", e.State)
	}
}

// TestPostgresOwnLapsedLeaseKeepsInFlight: a Run whose own lease lapsed while its request was
// out (a pause shorter than a takeover, a slow database) and that takes the lane back before
// anyone else did, keeps that request's entry Sending and commits its answer: nobody else
// delivered the lane meanwhile, so there is nothing to doubt.
func TestPostgresOwnLapsedLeaseKeepsInFlight(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	held, release := make(chan struct{}), make(chan struct{})
	releaseJob := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseJob) // before the simulator's Close, which waits for the held job
	rec.setOnJob(func(desc string, serve func()) bool {
		if desc == "first" {
			close(held)
			<-release
		}
		serve()
		return true
	})
	a := openPG(t, dsn, "q", newClient(t, srv.URL), WithLeaseTTL(time.Second))
	enqueue(t, a, Intent{ID: "first", Printer: "line1", Job: job("first")})
	running(t, a)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not arrive")
	}
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_lanes SET lease_until = now() - interval '1 second'`)
	// A's next look at the lanes (within a quarter of the TTL) takes the lane back.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var live bool
		if err := a.store.(*pgStore).db().QueryRow(context.Background(),
			`SELECT lease_until > now() FROM labelprinter_outbox_lanes WHERE printer = 'line1'`).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lane was not taken back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	releaseJob()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e, err := a.Wait(ctx, "first"); err != nil || e.State != Sent {
		t.Errorf("first: %s, %v; want sent", e.State, err)
	}
}
