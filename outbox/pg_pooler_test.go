package outbox

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresNoPreparedStatements: an Outbox that listens through a DSN of its own, as
// behind a pooler in transaction mode, leaves no named prepared statement in its sessions,
// which such a pooler would hand to another client (or lose) between two transactions:
// enqueue, list, get, cancel, delivery and the lanes' leases all run on a pool of one
// connection, which then holds no prepared statement. The same Outbox on a DSN whose own
// notification came back (sessions of the server's own) prepares its statements, so that the
// server plans each once per connection.
func TestPostgresNoPreparedStatements(t *testing.T) {
	for _, listen := range []bool{true, false} {
		dsn := pgtest.WithParam(pgtest.DSN(t), "pool_max_conns", "1")
		srv, rec := startSim(t, nil)
		var opts []Option
		if listen {
			opts = append(opts, WithListenDSN(dsn))
		}
		ob := openPG(t, dsn, "q", newClient(t, srv.URL), opts...)
		enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
		enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
		enqueue(t, ob, Intent{ID: "b", Printer: "line2", Job: job("b")})
		if err := ob.Cancel("b"); err != nil {
			t.Fatal(err)
		}
		if _, err := ob.List(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ob.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if e, err := ob.Get("a"); err != nil || e.State != Sent || len(rec.received()) != 1 {
			t.Fatalf("a: %+v, %v; received %v", e, err, rec.received())
		}
		var names []string
		rows, err := ob.store.(*pgStore).db().Query(ctx, `SELECT name FROM pg_prepared_statements`, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		if names, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
		switch {
		case listen && len(names) > 0:
			t.Errorf("with a listen DSN, the session holds %d prepared statements (%v); a pooler in transaction mode would break them", len(names), names[0])
		case !listen && len(names) < 5:
			t.Errorf("on a DSN whose notifications come back, the session holds %d prepared statements (%v); want those of the delivery, planned once", len(names), names)
		}
	}
}

// withoutProbe has OpenPostgres skip its check that notifications come back, as for a
// listener that went deaf after it opened.
func withoutProbe() Option {
	return func(o *options) error { o.probeWait = -1; return nil }
}

// statesOf is what log told of entry id, in order.
func statesOf(log *changeLog, id string) []State {
	var out []State
	for _, e := range log.get() {
		if e.ID == id {
			out = append(out, e.State)
		}
	}
	return out
}

// TestPostgresPoolerNeedsListenDSN: through PgBouncer in transaction mode, which carries
// transactions but not LISTEN, OpenPostgres refuses the DSN within seconds, naming the pooler
// and WithListenDSN, instead of opening an outbox whose Wait never returns.
func TestPostgresPoolerNeedsListenDSN(t *testing.T) {
	pooled, _ := pgtest.Pooler(t).NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	ob, err := OpenPostgres(ctx, pooled, "q", nil)
	took := time.Since(start)
	if err == nil {
		ob.Close()
		t.Fatal("OpenPostgres through a pooler in transaction mode opened an outbox that hears no notification")
	}
	if !errors.Is(err, ErrNoNotifications) || !strings.Contains(err.Error(), "pooler in transaction mode") || !strings.Contains(err.Error(), "WithListenDSN") {
		t.Errorf("error %q: want ErrNoNotifications, naming the pooler and WithListenDSN", err)
	}
	t.Logf("refused after %v: %v", took.Round(time.Millisecond), err)
	// The probe waits 3 s for its notification (pgProbeWait); 15 s leaves a loaded machine's
	// delay, and still fails a check that waits out its caller's context (60 s here).
	if limit := 15 * time.Second; took > limit {
		t.Errorf("refused after %v: the notification check at open took over %v", took.Round(time.Millisecond), limit)
	}
}

// TestPostgresPoolerWithListenDSN: through the pooler, with a listen DSN that reaches the
// server, the outbox delivers, Wait returns at once and WithStateChange tells every change in
// order; a listen DSN through the pooler is refused as the DSN is.
func TestPostgresPoolerWithListenDSN(t *testing.T) {
	pooled, direct := pgtest.Pooler(t).NewDatabase(t)
	srv, rec := startSim(t, nil)
	var log changeLog
	start := time.Now()
	ob := openPG(t, pooled, "q", newClient(t, srv.URL), WithListenDSN(direct), WithStateChange(log.add))
	t.Logf("opened, its notification checked, in %v", time.Since(start).Round(time.Millisecond))
	running(t, ob)
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	enqueue(t, ob, Intent{ID: "bad", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "missing"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for id, want := range map[string]State{"a": Sent, "bad": Rejected} {
		if e, err := ob.Wait(ctx, id); err != nil || e.State != want {
			t.Fatalf("Wait(%s): %v, %v; want %s", id, e.State, err, want)
		}
	}
	if got := rec.received(); !slices.Equal(got, []string{"a", ""}) {
		t.Errorf("printer received %q, want a and the rejected job once each", got)
	}
	waitFor(t, "every change told", func() bool { return len(statesOf(&log, "bad")) == 3 })
	if got := statesOf(&log, "a"); !slices.Equal(got, []State{Pending, Sending, Sent}) {
		t.Errorf("changes of a told: %v", got)
	}
	if got := statesOf(&log, "bad"); !slices.Equal(got, []State{Pending, Sending, Rejected}) {
		t.Errorf("changes of bad told: %v", got)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	ob2, err := OpenPostgres(ctx2, pooled, "q", nil, WithListenDSN(pooled))
	if err == nil {
		ob2.Close()
		t.Fatal("a listen DSN through the pooler was taken")
	}
	if !errors.Is(err, ErrNoNotifications) || !strings.Contains(err.Error(), "listen DSN") {
		t.Errorf("error %q: want ErrNoNotifications naming the listen DSN", err)
	}
}

// TestPostgresDeafListenerFallsBack: a listener that hears nothing (the pooler, with the check
// at open skipped) holds up nothing for long: Wait reads its entry every 2 s, and the changes
// this Outbox commits are read back and told to WithStateChange within seconds, each entry's
// in order, its Pending first (a command's acknowledgement waits for it).
func TestPostgresDeafListenerFallsBack(t *testing.T) {
	pooled, _ := pgtest.Pooler(t).NewDatabase(t)
	srv, _ := startSim(t, nil)
	var log changeLog
	var toldMu sync.Mutex
	var lastTold time.Time
	var logMu sync.Mutex
	var logs strings.Builder
	logged := func() string { logMu.Lock(); defer logMu.Unlock(); return logs.String() }
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	ob := openPG(t, pooled, "q", newClient(t, srv.URL), withoutProbe(), WithLogger(logger), WithStateChange(func(e Entry) {
		log.add(e)
		toldMu.Lock()
		lastTold = time.Now()
		toldMu.Unlock()
	}))
	running(t, ob)
	start := time.Now()
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	enqueue(t, ob, Intent{ID: "bad", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "missing"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for id, want := range map[string]State{"a": Sent, "bad": Rejected} {
		if e, err := ob.Wait(ctx, id); err != nil || e.State != want {
			t.Fatalf("Wait(%s): %v, %v; want %s (a Wait that only listens never returns here)", id, e.State, err, want)
		}
	}
	t.Logf("both settled, as Wait read them, %v after the enqueues", time.Since(start).Round(time.Millisecond))
	waitFor(t, "the final changes told", func() bool {
		a, bad := statesOf(&log, "a"), statesOf(&log, "bad")
		return len(a) > 0 && a[len(a)-1] == Sent && len(bad) > 0 && bad[len(bad)-1] == Rejected
	})
	toldMu.Lock()
	t.Logf("the last change told %v after the enqueues", lastTold.Sub(start).Round(time.Millisecond))
	toldMu.Unlock()
	for id, final := range map[string]State{"a": Sent, "bad": Rejected} {
		got := statesOf(&log, id)
		// Read back, a state in between may be skipped; never one told twice or out of order.
		if got[0] != Pending || got[len(got)-1] != final || len(got) > 3 || (len(got) == 3 && got[1] != Sending) {
			t.Errorf("changes of %s told: %v; want Pending, [Sending,] %s", id, got, final)
		}
	}
	// Not silently: the log says so once, naming the likely cause.
	if n := strings.Count(logged(), "level=WARN msg=\"outbox: changes committed here were not heard"); n != 1 ||
		!strings.Contains(logged(), "pooler in transaction mode") {
		t.Errorf("%d warnings of changes read back, want 1 naming the pooler; the log:\n%s", n, logged())
	}
}
