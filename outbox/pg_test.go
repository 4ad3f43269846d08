package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// openPG opens queue on dsn with a short retry interval, closed at cleanup.
func openPG(t testing.TB, dsn, queue string, c *labelprinter.Client, opts ...Option) *Outbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ob, err := OpenPostgres(ctx, dsn, queue, c, append([]Option{WithRetryInterval(10 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ob.Close() })
	return ob
}

// sqlExec runs one statement on dsn.
func sqlExec(t testing.TB, dsn, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresClaimWorkers is the shape of the claim that a single-statement SKIP LOCKED
// query fails: several Runs deliver one queue of three printers at once, while entries keep
// coming. Every job reaches its printer once, each printer's in enqueue order, and no printer
// ever has two requests at once.
func TestPostgresClaimWorkers(t *testing.T) {
	dsn := pgtest.DSN(t)
	printers := []string{"p1", "p2", "p3"}
	srv, rec := startSimWith(t, nil, printers...)
	guard := &laneGuard{busy: map[string]bool{}}
	rec.setOnJob(guard.onJob)
	const workers, jobs = 6, 300
	for range workers {
		running(t, openPG(t, dsn, "q", newClient(t, srv.URL)))
	}
	producer := openPG(t, dsn, "q", nil)
	want := map[string][]string{}
	for i := range jobs {
		p := printers[i%len(printers)]
		id := fmt.Sprintf("%s-%03d", p, i)
		want[p] = append(want[p], id)
		enqueue(t, producer, Intent{ID: id, Printer: p, Job: job(id)})
	}
	waitFor(t, "every job sent", func() bool {
		es, err := producer.List(Sent)
		if err != nil {
			t.Fatal(err)
		}
		return len(es) == jobs
	})
	got := map[string][]string{}
	for _, d := range rec.received() {
		got[strings.SplitN(d, "-", 2)[0]] = append(got[strings.SplitN(d, "-", 2)[0]], d)
	}
	twice := 0
	for d, n := range rec.counts() {
		if n > 1 {
			twice++
			t.Errorf("%s printed %d times", d, n)
		}
	}
	for _, p := range printers {
		if !slices.Equal(got[p], want[p]) {
			t.Errorf("%s received %d jobs, out of order or missing:\n%v\nwant\n%v", p, len(got[p]), got[p], want[p])
		}
	}
	guard.mu.Lock()
	if len(guard.overlap) > 0 {
		t.Errorf("two requests at one printer at once: %v", guard.overlap)
	}
	guard.mu.Unlock()
	all, _ := producer.List()
	for _, e := range all {
		if e.State != Sent || e.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts (%s)", e.ID, e.State, e.Attempts, e.Error)
		}
	}
}

// TestPostgresEnqueueSameIDAtOnce: two Outboxes enqueue one ID at the same moment; one entry
// is stored and both callers get it.
func TestPostgresEnqueueSameIDAtOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openPG(t, dsn, "q", nil), openPG(t, dsn, "q", nil)
	for i := range 20 {
		id := fmt.Sprint("same-", i)
		var wg sync.WaitGroup
		got := make([]Entry, 2)
		for k, ob := range []*Outbox{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := ob.Enqueue(context.Background(), Intent{ID: id, Printer: "line1", Job: job(fmt.Sprint("from ", k))})
				if err != nil {
					t.Error(err)
				}
				got[k] = e
			}()
		}
		wg.Wait()
		if got[0].Job.Description != got[1].Job.Description || got[0].Enqueued != got[1].Enqueued {
			t.Errorf("%s: the callers got different entries: %+v and %+v", id, got[0].Job, got[1].Job)
		}
	}
	all, err := a.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 20 {
		t.Errorf("%d entries, want 20", len(all))
	}
}

// TestPostgresQueuesApart: IDs are unique per queue; two queues share a database without
// seeing each other's entries.
func TestPostgresQueuesApart(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openPG(t, dsn, "a", nil), openPG(t, dsn, "b", nil)
	enqueue(t, a, Intent{ID: "x", Job: job("in a")})
	e := enqueue(t, b, Intent{ID: "x", Job: job("in b")})
	if e.Job.Description != "in b" {
		t.Errorf("queue b got %q", e.Job.Description)
	}
	la, _ := a.List()
	lb, _ := b.List()
	if len(la) != 1 || len(lb) != 1 {
		t.Errorf("a has %d entries, b %d; want 1 each", len(la), len(lb))
	}
}

// TestPostgresTakeover: a Run whose holder's lease ran out takes the lane over; the entry the
// dead holder left Sending becomes Unknown and is never sent; the next one goes out within
// the lease's TTL plus 2 s.
func TestPostgresTakeover(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	ob := openPG(t, dsn, "q", newClient(t, srv.URL), WithLeaseTTL(time.Second))
	enqueue(t, ob, Intent{ID: "inflight", Printer: "line1", Job: job("inflight")})
	enqueue(t, ob, Intent{ID: "next", Printer: "line1", Job: job("next")})
	// What a runner that died after committing Sending leaves behind: its lease, still running.
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_entries SET state = 'sending', attempts = 1 WHERE id = 'inflight'`)
	sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_lanes (queue, printer, owner, lease_until, in_flight)
		VALUES ('q', 'line1', 'dead', now() + interval '1 second', 1)`)
	start := time.Now()
	running(t, ob)
	e, err := ob.Wait(context.Background(), "next")
	if err != nil || e.State != Sent {
		t.Fatalf("next: %v %v", e.State, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the lane was delivered again after %v, more than the TTL plus 2 s", d)
	}
	e, _ = ob.Get("inflight")
	if e.State != Unknown || !strings.Contains(e.Error, "may or may not") {
		t.Errorf("inflight: %s %q", e.State, e.Error)
	}
	if got := rec.received(); !slices.Equal(got, []string{"next"}) {
		t.Errorf("received %v", got)
	}
}

// TestPostgresLiveLeaseHoldsLane: a lane whose lease another Run holds is not delivered, and
// Drain returns with what it could deliver.
func TestPostgresLiveLeaseHoldsLane(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	ob := openPG(t, dsn, "q", newClient(t, srv.URL))
	sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_lanes (queue, printer, owner, lease_until)
		VALUES ('q', 'line1', 'alive', now() + interval '1 hour')`)
	enqueue(t, ob, Intent{ID: "held", Printer: "line1", Job: job("held")})
	enqueue(t, ob, Intent{ID: "free", Printer: "line2", Job: job("free")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ob.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.received(); !slices.Equal(got, []string{"free"}) {
		t.Errorf("received %v, want only the free lane's", got)
	}
	if e, _ := ob.Get("held"); e.State != Pending {
		t.Errorf("held: %s", e.State)
	}
}

// TestPostgresWaitAcrossOutboxes: a Wait and a WithStateChange in one Outbox hear of the
// delivery another commits, within a second, without polling.
func TestPostgresWaitAcrossOutboxes(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, _ := startSim(t, nil)
	var log changeLog
	watcher := openPG(t, dsn, "q", nil, WithStateChange(log.add))
	enqueue(t, watcher, Intent{ID: "w", Printer: "line1", Job: job("w")})
	waited := make(chan time.Time, 1)
	go func() {
		e, err := watcher.Wait(context.Background(), "w")
		if err != nil || e.State != Sent {
			t.Errorf("Wait: %v %v", e.State, err)
		}
		waited <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond)
	deliverer := openPG(t, dsn, "q", newClient(t, srv.URL))
	var sentAt time.Time
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := deliverer.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	sentAt = time.Now()
	select {
	case at := <-waited:
		if d := at.Sub(sentAt); d > time.Second {
			t.Errorf("Wait returned %v after the delivery", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return")
	}
	// The callback runs from the first Run or Drain, or at Close.
	if err := watcher.Close(); err != nil {
		t.Fatal(err)
	}
	if got := steps(log.get()); !slices.Equal(got, []string{"w pending", "w sending", "w sent"}) {
		t.Errorf("changes told: %v", got)
	}
}

// TestPostgresNewerVersionRefused: tables of a newer version are left alone, with an error
// that says so.
func TestPostgresNewerVersionRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	openPG(t, dsn, "q", nil).Close()
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_version SET version = 2`)
	_, err := OpenPostgres(context.Background(), dsn, "q", nil)
	if err == nil || !strings.Contains(err.Error(), "version 2") || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("OpenPostgres on newer tables: %v", err)
	}
}

// TestPostgresTablesInSearchPath: the tables go to the DSN's search_path, not to public.
func TestPostgresTablesInSearchPath(t *testing.T) {
	dsn := pgtest.DSN(t)
	openPG(t, dsn, "q", nil)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var schema, path string
	if err := conn.QueryRow(ctx, `SELECT table_schema, current_schema() FROM information_schema.tables
		WHERE table_name = 'labelprinter_outbox_entries' AND table_schema = current_schema()`).Scan(&schema, &path); err != nil {
		t.Fatal(err)
	}
	if schema == "public" {
		t.Errorf("tables in %s", schema)
	}
}

// TestPostgresPasswordRedacted: no error carries the DSN's password, whether the DSN cannot
// be parsed, the server cannot be reached or a statement fails.
func TestPostgresPasswordRedacted(t *testing.T) {
	const pw = "Hunter2-s3cret"
	for _, dsn := range []string{
		"postgres://lp:" + pw + "@127.0.0.1:1/plant?connect_timeout=2",
		"host=127.0.0.1 port=1 user=lp password=" + pw + " connect_timeout=2",
		"postgres://lp:" + pw + "@127.0.0.1:notaport/plant",
		"host=127.0.0.1 port=x password='" + pw + "'",
	} {
		start := time.Now()
		_, err := OpenPostgres(context.Background(), dsn, "q", nil)
		if err == nil {
			t.Fatalf("%s: no error", dsn)
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(fmt.Sprintf("%+v", err), pw) {
			t.Errorf("the password is in the error: %v", err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("a refused connection took %v", time.Since(start))
		}
	}
}

// TestPostgresOutage: with the database down, Enqueue fails at once and says nothing was
// stored, Run waits it out; once it is back, nothing is lost and nothing is sent twice.
func TestPostgresOutage(t *testing.T) {
	srvPG := pgtest.Own(t)
	dsn := pgtest.WithParam(srvPG.AdminDSN(), "password", "Outage-pw-9")
	srv, rec := startSim(t, nil)
	var logMu sync.Mutex
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	ob := openPG(t, dsn, "q", newClient(t, srv.URL), WithLeaseTTL(time.Second), WithLogger(logger))
	running(t, ob)
	for i := range 5 {
		enqueue(t, ob, Intent{ID: fmt.Sprint("before-", i), Printer: "line1", Job: job(fmt.Sprint("before-", i))})
	}
	waitState(t, ob, "before-4", Sent)
	srvPG.StopServer(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, err := ob.Enqueue(ctx, Intent{ID: "during", Printer: "line1", Job: job("during")})
	cancel()
	if err == nil {
		t.Fatal("Enqueue with the database down: no error")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Enqueue took %v to fail", d)
	}
	if strings.Contains(err.Error(), "Outage-pw-9") {
		t.Errorf("the password is in the error: %v", err)
	}
	waitFor(t, "Run to log the failure", func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		return strings.Contains(logs.String(), "the database failed; retrying")
	})
	srvPG.StartServer(t)
	for i := range 5 {
		enqueue(t, ob, Intent{ID: fmt.Sprint("after-", i), Printer: "line1", Job: job(fmt.Sprint("after-", i))})
	}
	e, err := ob.Wait(context.Background(), "after-4")
	if err != nil || e.State != Sent {
		t.Fatalf("after-4: %v %v", e.State, err)
	}
	for d, n := range rec.counts() {
		if n != 1 {
			t.Errorf("%s printed %d times", d, n)
		}
	}
	if _, err := ob.Get("during"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed Enqueue stored something: %v", err)
	}
	logMu.Lock()
	if strings.Contains(logs.String(), "Outage-pw-9") {
		t.Errorf("the password is in the log:\n%s", logs.String())
	}
	logMu.Unlock()
	// One printer: at most the one entry in flight when the database went away is in doubt.
	if unknown, _ := ob.List(Unknown); len(unknown) > 1 {
		t.Errorf("%d unknown entries: %v", len(unknown), ids(unknown))
	}
	if all, _ := ob.List(); len(all) != 10 {
		t.Errorf("%d entries, want 10", len(all))
	}
}

// TestPostgresPendingToldFirst: a new entry is told just after its commit, so a Run in
// another process can commit its Sending first; the listener tells the entry's Pending
// before it, and not again when its own notification comes.
func TestPostgresPendingToldFirst(t *testing.T) {
	var got []string
	var ids []uint64
	s := &pgStore{newTold: map[uint64]bool{}, early: map[uint64]bool{}, since: time.Now().Add(-time.Minute),
		toldState: toldState{toldAt: map[uint64]time.Time{}, unheard: map[uint64]unheard{}},
		hook: commitHook{committed: func(id uint64, recs []*record) {
			ids = append(ids, id)
			for _, r := range recs {
				got = append(got, fmt.Sprintf("%s %s %d", r.ID, r.State, r.Attempts))
			}
		}},
		onChange: func(*record, bool) {}}
	now := time.Now().UTC()
	// Each change of an entry has a later Updated than the one before.
	payload := func(state State, attempts int, isNew bool, later time.Duration) string {
		b, err := json.Marshal(struct {
			*record
			New bool `json:"new,omitempty"`
		}{&record{Seq: 7, ID: "x", Printer: "line1", Job: json.RawMessage(`{"labelName":"L"}`), ExpireAfter: time.Hour,
			State: state, Attempts: attempts, Enqueued: now, Updated: now.Add(later)}, isNew})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, p := range []string{payload(Sending, 1, false, time.Millisecond), payload(Pending, 0, true, 0), payload(Sent, 1, false, 2*time.Millisecond)} {
		s.heard(context.Background(), p)
	}
	if want := []string{"x pending 0", "x sending 1", "x sent 1"}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
	if !slices.Equal(ids, []uint64{1, 2, 3}) {
		t.Errorf("change numbers %v, want 1 2 3 without a gap", ids)
	}
}

// laneGuard fails the test when two requests for one printer are at the printer at once.
type laneGuard struct {
	mu      sync.Mutex
	busy    map[string]bool
	overlap []string
}

func (g *laneGuard) onJob(desc string, serve func()) bool {
	p := strings.SplitN(desc, "-", 2)[0]
	g.mu.Lock()
	if g.busy[p] {
		g.overlap = append(g.overlap, desc)
	}
	g.busy[p] = true
	g.mu.Unlock()
	time.Sleep(time.Millisecond) // long enough for a second request to meet this one
	serve()
	g.mu.Lock()
	g.busy[p] = false
	g.mu.Unlock()
	return true
}

// TestPostgresClocksAnHourApart: two Runs whose hosts' clocks differ by an hour share a queue
// of three printers; leases go by the database's clock, so no printer ever has two requests
// from them at once, every job reaches it once and in order.
func TestPostgresClocksAnHourApart(t *testing.T) {
	dsn := pgtest.DSN(t)
	printers := []string{"p1", "p2", "p3"}
	srv, rec := startSimWith(t, nil, printers...)
	guard := &laneGuard{busy: map[string]bool{}}
	rec.setOnJob(guard.onJob)
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	behind := func() time.Time { return time.Now().Add(-time.Hour) }
	var runs []*Outbox
	for _, clock := range []func() time.Time{ahead, behind} {
		ob := openPG(t, dsn, "q", newClient(t, srv.URL), WithLeaseTTL(500*time.Millisecond), func(o *options) error { o.clock = clock; return nil })
		running(t, ob)
		runs = append(runs, ob)
	}
	want := map[string][]string{}
	for i := range 90 {
		p := printers[i%len(printers)]
		id := fmt.Sprintf("%s-%03d", p, i)
		want[p] = append(want[p], id)
		if i == 45 {
			// The lanes change hands: the Run ahead stops and gives its lanes up.
			time.Sleep(200 * time.Millisecond)
			if err := runs[0].Close(); err != nil {
				t.Fatal(err)
			}
		}
		producer := runs[i%2]
		if i >= 45 {
			producer = runs[1]
		}
		enqueue(t, producer, Intent{ID: id, Printer: p, Job: job(id), ExpireAfter: 10 * time.Minute})
	}
	waitFor(t, "every job sent", func() bool { es, _ := runs[1].List(Sent); return len(es) == 90 })
	got := map[string][]string{}
	for _, d := range rec.received() {
		p := strings.SplitN(d, "-", 2)[0]
		got[p] = append(got[p], d)
	}
	for _, p := range printers {
		if !slices.Equal(got[p], want[p]) {
			t.Errorf("%s received %v", p, got[p])
		}
	}
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if len(guard.overlap) > 0 {
		t.Errorf("two requests at one printer at once: %v", guard.overlap)
	}
	// Neither clock expired anything: ExpireAfter counts by the database's clock.
	if es, _ := runs[1].List(Expired); len(es) > 0 {
		t.Errorf("%d expired", len(es))
	}
}

// TestPostgresPassfile: a DSN without a password takes it from PGPASSFILE, as libpq does, and
// keeps it out of errors too.
func TestPostgresPassfile(t *testing.T) {
	const pw = "Passfile-pw9"
	pass := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(pass, []byte("127.0.0.1:1:*:lp:"+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", pass)
	dsn := "postgres://lp@127.0.0.1:1/plant?connect_timeout=2"
	cfg, _, err := parseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnConfig.Password != pw {
		t.Errorf("password %q, want the passfile's", cfg.ConnConfig.Password)
	}
	_, err = OpenPostgres(context.Background(), dsn, "q", nil)
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("error: %v", err)
	}
}
