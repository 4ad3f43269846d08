package outbox

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// callCount counts what a store's pools ask of the server: trips is the calls (an Exec, Query
// or QueryRow is one; so is a batch, whatever it holds, since it is sent at once and its
// answers read at once), statements the statements (a batch's each). With only set, a call
// counts only when its context carries countThis.
type callCount struct {
	mu         sync.Mutex
	only       bool
	trips      int
	statements int
}

type countThis struct{}

func (c *callCount) counts(ctx context.Context) bool {
	return !c.only || ctx.Value(countThis{}) != nil
}

func (c *callCount) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if c.counts(ctx) {
		c.mu.Lock()
		c.trips++
		c.statements++
		c.mu.Unlock()
	}
	return ctx
}

func (c *callCount) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *callCount) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	if c.counts(ctx) {
		c.mu.Lock()
		c.trips++
		c.mu.Unlock()
	}
	return ctx
}

func (c *callCount) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchQueryData) {
	if c.counts(ctx) {
		c.mu.Lock()
		c.statements++
		c.mu.Unlock()
	}
}

func (c *callCount) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *callCount) take() (trips, statements int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	trips, statements = c.trips, c.statements
	c.trips, c.statements = 0, 0
	return trips, statements
}

func withTracer(t pgx.QueryTracer) Option {
	return func(o *options) error { o.tracer = t; return nil }
}

// TestPostgresGetEachOneRoundTrip: GetEach reads several IDs of a queue in PostgreSQL in one
// round trip (Get takes one each), and what it returns for each ID is what Get returns. It
// also counts an Enqueue's round trips: two, the insert's commit and then the notification's
// (a NOTIFY in the insert's own transaction would hold a lock of the whole database until the
// commit is flushed, so concurrent Enqueues would wait for each other's disk writes).
func TestPostgresGetEachOneRoundTrip(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := &callCount{only: true}
	ob := openPG(t, dsn, "q", nil, withTracer(w))
	r := &callCount{}
	reader := openPG(t, dsn, "q", nil, withTracer(r))
	job := labelprinter.PrintJob{LabelName: "L", Copies: 1}
	ctx := context.WithValue(context.Background(), countThis{}, true)
	for _, id := range []string{"a", "b", "c", "gone"} {
		w.take()
		if _, err := ob.Enqueue(ctx, Intent{ID: id, Printer: "line1", Job: job}); err != nil {
			t.Fatal(err)
		}
		if trips, statements := w.take(); trips != 2 || statements != 2 {
			t.Errorf("Enqueue %q: %d round trips, %d statements; want 2 and 2", id, trips, statements)
		}
	}
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_entries SET state = 'sent', pruned = now(), job = NULL
		WHERE queue = 'q' AND id = 'gone'`)

	ids := []string{"b", "none", "gone", "a", "b"}
	r.take()
	es, errs := reader.GetEach(ids...)
	if trips, _ := r.take(); trips != 1 {
		t.Errorf("GetEach of %d IDs: %d round trips, want 1", len(ids), trips)
	}
	if len(es) != len(ids) || len(errs) != len(ids) {
		t.Fatalf("GetEach of %d IDs returned %d entries and %d errors", len(ids), len(es), len(errs))
	}
	for i, id := range ids {
		e, err := reader.Get(id)
		if !reflect.DeepEqual(es[i], e) || (err == nil) != (errs[i] == nil) || (err != nil && err.Error() != errs[i].Error()) {
			t.Errorf("GetEach's %q: %+v, %v; Get's: %+v, %v", id, es[i], errs[i], e, err)
		}
	}
	if !errors.Is(errs[1], ErrNotFound) || errors.Is(errs[1], ErrPruned) {
		t.Errorf("GetEach of an ID never enqueued: %v, want ErrNotFound", errs[1])
	}
	if !errors.Is(errs[2], ErrNotFound) || !errors.Is(errs[2], ErrPruned) {
		t.Errorf("GetEach of a pruned ID: %v, want ErrNotFound and ErrPruned", errs[2])
	}
	if es[0].ID != "b" || es[3].ID != "a" || es[0].State != Pending {
		t.Errorf("GetEach: %+v and %+v, want b and a Pending", es[0], es[3])
	}
	ob.Close()
	if _, errs := ob.GetEach("a", "b"); !errors.Is(errs[0], errClosed) || !errors.Is(errs[1], errClosed) {
		t.Errorf("GetEach on a closed outbox: %v", errs)
	}
}

// TestGetEachMatchesGet: on each store, GetEach returns for each ID, in the order given, what
// Get returns: a Pending entry, a cancelled one, one pruned, one never enqueued.
func TestGetEachMatchesGet(t *testing.T) {
	eachStore(t, func(t *testing.T, st testStore) {
		ob := st.open(t, nil)
		job := labelprinter.PrintJob{LabelName: "L", Copies: 1}
		for _, id := range []string{"a", "old", "off"} {
			if _, err := ob.Enqueue(context.Background(), Intent{ID: id, Printer: "line1", Job: job}); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"old", "off"} {
			if err := ob.Cancel(id); err != nil {
				t.Fatal(err)
			}
		}
		st.age(t, ob, 2*time.Hour)
		if err := ob.Cancel("a"); err != nil {
			t.Fatal(err)
		}
		if _, err := ob.Enqueue(context.Background(), Intent{ID: "new", Printer: "line1", Job: job}); err != nil {
			t.Fatal(err)
		}
		if n, err := ob.Prune(time.Hour); err != nil || n != 2 {
			t.Fatalf("Prune: %d, %v; want the 2 entries cancelled 2 h ago", n, err)
		}
		ids := []string{"new", "none", "old", "a", "new"}
		es, errs := ob.GetEach(ids...)
		for i, id := range ids {
			e, err := ob.Get(id)
			if !reflect.DeepEqual(es[i], e) || (err == nil) != (errs[i] == nil) || (err != nil && err.Error() != errs[i].Error()) {
				t.Errorf("GetEach's %q: %+v, %v; Get's: %+v, %v", id, es[i], errs[i], e, err)
			}
		}
		if es[0].State != Pending || es[3].State != Cancelled || !errors.Is(errs[2], ErrPruned) || !errors.Is(errs[1], ErrNotFound) || errors.Is(errs[1], ErrPruned) {
			t.Errorf("GetEach: %+v, %v", es, errs)
		}
	})
}

// TestPostgresClaimOneRoundTrip: a delivery's claim on PostgreSQL (the lane's lease checked
// and renewed, the head locked, the entry Sending with one more attempt) is one statement in
// one round trip, and so is its outcome. A claim of an entry that is not the lane's head
// changes nothing but still renews the lease.
func TestPostgresClaimOneRoundTrip(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := &callCount{only: true}
	ob := openPG(t, dsn, "q", nil, withTracer(w))
	s := ob.store.(*pgStore)
	ctx := context.WithValue(context.Background(), countThis{}, true)
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	enqueue(t, ob, Intent{ID: "b", Printer: "line1", Job: job("b")})
	if st, err := s.sync(context.Background(), func(uint64) bool { return false }); err != nil || len(st.held) != 1 {
		t.Fatalf("sync: %+v, %v", st, err)
	}
	a, err := s.lookup(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.lookup(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	w.take()
	if r, err := s.begin(ctx, &item{id: "b", seq: b.Seq, printer: "line1"}, time.Time{}, beginRule); err != nil || r != nil {
		t.Fatalf("claim of b behind a: %+v, %v; want nothing", r, err)
	}
	if trips, statements := w.take(); trips != 1 || statements != 1 {
		t.Errorf("a claim that finds another head: %d round trips, %d statements; want 1 and 1", trips, statements)
	}
	before := time.Now()
	r, err := s.begin(ctx, &item{id: "a", seq: a.Seq, printer: "line1"}, time.Time{}, beginRule)
	if err != nil || r == nil {
		t.Fatalf("claim of a: %+v, %v", r, err)
	}
	if trips, statements := w.take(); trips != 1 || statements != 1 {
		t.Errorf("a claim: %d round trips, %d statements; want 1 and 1", trips, statements)
	}
	want := *a
	beginRule(&want)
	want.Updated = r.Updated
	if !reflect.DeepEqual(r, &want) {
		t.Errorf("the claim returned %+v, want %+v", r, &want)
	}
	if l := s.leases.lease(r.Printer); l == nil || l.Deadline().Before(before.Add(s.ttl*4/5)) {
		t.Errorf("after the claim the lane's lease is %v, want renewed from the claim's send", l)
	}
	got, err := s.lookup(ctx, "a")
	if err != nil || got.State != Sending || got.Attempts != 1 || !got.Updated.Equal(r.Updated) {
		t.Errorf("a as stored: %+v, %v; want Sending, 1 attempt, updated as returned", got, err)
	}
	w.take()
	done := *r
	done.State = Sent
	if err := s.finish(ctx, &done); err != nil {
		t.Fatal(err)
	}
	if trips, statements := w.take(); trips != 1 || statements != 1 {
		t.Errorf("an outcome: %d round trips, %d statements; want 1 and 1", trips, statements)
	}
}

// TestPostgresClaimFollowsItsRule: the claim's statement writes beginRule in SQL; a rule that
// makes something else of the entry is an error of the claim, not a delivery.
func TestPostgresClaimFollowsItsRule(t *testing.T) {
	dsn := pgtest.DSN(t)
	ob := openPG(t, dsn, "q", nil)
	s := ob.store.(*pgStore)
	ctx := context.Background()
	enqueue(t, ob, Intent{ID: "a", Printer: "line1", Job: job("a")})
	if _, err := s.sync(ctx, func(uint64) bool { return false }); err != nil {
		t.Fatal(err)
	}
	a, err := s.lookup(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	twice := func(r *record) bool { r.State, r.Attempts = Sending, r.Attempts+2; return true }
	if r, err := s.begin(ctx, &item{id: "a", seq: a.Seq, printer: "line1"}, time.Time{}, twice); err == nil || r != nil {
		t.Errorf("a claim whose rule counts two attempts: %+v, %v; want an error", r, err)
	}
}
