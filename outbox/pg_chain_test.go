package outbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// claimTrace counts, of the statements a store sends, the claims alone, the outcomes alone,
// and the outcomes that claim the next entry.
type claimTrace struct {
	mu                          sync.Mutex
	claims, outcomes, outClaims int
}

func (c *claimTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case d.SQL == claimSQL:
		c.claims++
	case d.SQL == finishClaimSQL:
		c.outClaims++
	case strings.HasPrefix(d.SQL, "WITH e AS (UPDATE labelprinter_outbox_entries SET state = $3"):
		c.outcomes++
	}
	return ctx
}

func (c *claimTrace) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *claimTrace) counts() (claims, outcomes, outClaims int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claims, c.outcomes, c.outClaims
}

// TestPostgresOutcomeClaimsNext: a Run delivering a lane of five due entries on PostgreSQL
// commits each outcome with the claim of the next entry, in one statement: one claim, four
// outcomes that claim, one outcome alone, where each entry took a claim and an outcome
// before; Counts counts the five sent. WithStateChange tells each entry's outcome before the
// next entry's Sending, and the printer gets the five once each, in order.
func TestPostgresOutcomeClaimsNext(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	tr := &claimTrace{}
	var (
		mu   sync.Mutex
		told []string
	)
	ob := openPG(t, dsn, "q", newClient(t, srv.URL), withTracer(tr), WithStateChange(func(e Entry) {
		if e.State != Pending {
			mu.Lock()
			told = append(told, e.ID+" "+string(e.State))
			mu.Unlock()
		}
	}))
	ids := []string{"e1", "e2", "e3", "e4", "e5"}
	var want []string
	for _, id := range ids {
		enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
		want = append(want, id+" sending", id+" sent")
	}
	running(t, ob)
	for _, id := range ids {
		waitState(t, ob, id, Sent)
	}
	if claims, outcomes, outClaims := tr.counts(); claims != 1 || outcomes != 1 || outClaims != 4 {
		t.Errorf("five entries of a lane took %d claims, %d outcomes alone and %d outcomes that claim; want 1, 1 and 4", claims, outcomes, outClaims)
	}
	if got := rec.received(); !slices.Equal(got, ids) {
		t.Errorf("the printer got %v, want %v", got, ids)
	}
	// The counts of final entries follow statements that settle one entry and claim another.
	if c, err := ob.Counts(); err != nil || c["line1"][Sent] != len(ids) || len(c["line1"]) != 1 {
		t.Errorf("Counts: %v, %v; want %d sent", c, err, len(ids))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := slices.Clone(told)
		mu.Unlock()
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("told %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresOutcomeClaimsNextOnlyWhenHeld: the outcome that would claim the next entry
// claims it only while the lane is this Outbox's with its lease live and the next entry is
// the lane's Pending head; otherwise it commits the outcome (or, too late, nothing) and leaves
// the next entry as it was.
func TestPostgresOutcomeClaimsNextOnlyWhenHeld(t *testing.T) {
	dsn := pgtest.DSN(t)
	none := func(uint64) bool { return false }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	setup := func(t *testing.T, queue string) (*pgStore, []*item, *record) {
		ob := openPG(t, dsn, queue, nil)
		s := ob.store.(*pgStore)
		var its []*item
		for i := range 3 {
			id := fmt.Sprintf("%s%d", queue, i)
			enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
			r, err := s.lookup(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			its = append(its, &item{id: id, seq: r.Seq, printer: "line1"})
		}
		if st, err := s.sync(ctx, none); err != nil || len(st.held) != 1 {
			t.Fatalf("sync: %+v, %v", st, err)
		}
		first, err := s.begin(ctx, its[0], time.Time{}, beginRule)
		if err != nil || first == nil {
			t.Fatalf("begin: %+v, %v", first, err)
		}
		done := *first
		done.State = Sent
		return s, its, &done
	}
	state := func(t *testing.T, s *pgStore, id string) (State, int) {
		r, err := s.lookup(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.State, r.Attempts
	}

	t.Run("held", func(t *testing.T) {
		s, its, done := setup(t, "held")
		before := time.Now()
		next, claimErr, err := s.finishBegin(ctx, done, its[1], beginRule)
		if err != nil || claimErr != nil || next == nil || next.ID != its[1].id || next.State != Sending || next.Attempts != 1 {
			t.Fatalf("finishBegin: %+v, %v, %v; want the next entry Sending", next, claimErr, err)
		}
		if st, _ := state(t, s, its[0].id); st != Sent {
			t.Errorf("the outcome: %s, want sent", st)
		}
		if l := s.leases.lease("line1"); l == nil || l.Deadline().Before(before.Add(s.ttl*4/5)) {
			t.Errorf("the lease after the claim: %v, want renewed from its send", l)
		}
	})
	t.Run("lease ran out", func(t *testing.T) {
		s, its, done := setup(t, "lapsed")
		sqlExec(t, dsn, `UPDATE labelprinter_outbox_lanes SET lease_until = now() - interval '1 second' WHERE queue = 'lapsed'`)
		next, claimErr, err := s.finishBegin(ctx, done, its[1], beginRule)
		if err != nil || claimErr != nil || next != nil {
			t.Fatalf("finishBegin: %+v, %v, %v; want the outcome alone", next, claimErr, err)
		}
		if st, _ := state(t, s, its[0].id); st != Sent {
			t.Errorf("the outcome: %s, want sent", st)
		}
		if st, n := state(t, s, its[1].id); st != Pending || n != 0 {
			t.Errorf("the next entry: %s after %d attempts, want pending, untouched", st, n)
		}
	})
	t.Run("taken over", func(t *testing.T) {
		s, its, done := setup(t, "taken")
		other := openPG(t, dsn, "taken", nil).store.(*pgStore)
		sqlExec(t, dsn, `UPDATE labelprinter_outbox_lanes SET lease_until = now() - interval '1 second' WHERE queue = 'taken'`)
		if st, err := other.sync(ctx, none); err != nil || len(st.unknown) != 1 {
			t.Fatalf("the other's sync: %+v, %v", st, err)
		}
		next, claimErr, err := s.finishBegin(ctx, done, its[1], beginRule)
		if !errors.Is(err, errLateOutcome) || claimErr != nil || next != nil {
			t.Fatalf("finishBegin: %+v, %v, %v; want errLateOutcome", next, claimErr, err)
		}
		if st, _ := state(t, s, its[0].id); st != Unknown {
			t.Errorf("the entry taken over: %s, want unknown", st)
		}
		if st, n := state(t, s, its[1].id); st != Pending || n != 0 {
			t.Errorf("the next entry: %s after %d attempts, want pending, untouched", st, n)
		}
	})
	t.Run("not the head", func(t *testing.T) {
		s, its, done := setup(t, "behind")
		next, claimErr, err := s.finishBegin(ctx, done, its[2], beginRule)
		if err != nil || claimErr != nil || next != nil {
			t.Fatalf("finishBegin past the head: %+v, %v, %v; want the outcome alone", next, claimErr, err)
		}
		if st, n := state(t, s, its[2].id); st != Pending || n != 0 {
			t.Errorf("the entry behind the head: %s after %d attempts, want pending, untouched", st, n)
		}
		if s.leases.lease("line1") == nil {
			t.Error("the lease was let go; it is held")
		}
	})
	t.Run("another rule", func(t *testing.T) {
		s, its, done := setup(t, "rule")
		twice := func(r *record) bool { r.State, r.Attempts = Sending, r.Attempts+2; return true }
		next, claimErr, err := s.finishBegin(ctx, done, its[1], twice)
		if err != nil || claimErr == nil || next != nil {
			t.Fatalf("finishBegin with a rule of two attempts: %+v, %v, %v; want the outcome and an error of the claim", next, claimErr, err)
		}
		if st, _ := state(t, s, its[0].id); st != Sent {
			t.Errorf("the outcome: %s, want sent", st)
		}
	})
}

// TestPostgresRunEndsBetweenEntries: a Run that is told to end while a request of a lane is
// at the printer lets it settle and goes on to none of the lane's next entries: they stay
// Pending for the next Run.
func TestPostgresRunEndsBetweenEntries(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSim(t, nil)
	held, release := make(chan struct{}), make(chan struct{})
	releaseJob := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseJob)
	rec.setOnJob(func(desc string, serve func()) bool {
		if desc == "e1" {
			close(held)
			<-release
		}
		serve()
		return true
	})
	ob := openPG(t, dsn, "q", newClient(t, srv.URL))
	for _, id := range []string{"e1", "e2", "e3"} {
		enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- ob.Run(ctx) }()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("e1 did not reach the printer")
	}
	cancel()
	time.Sleep(50 * time.Millisecond) // Run hears it
	releaseJob()
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := rec.received(); !slices.Equal(got, []string{"e1"}) {
		t.Errorf("the printer got %v, want e1 alone", got)
	}
	for id, want := range map[string]State{"e1": Sent, "e2": Pending, "e3": Pending} {
		if e, err := ob.Get(id); err != nil || e.State != want {
			t.Errorf("%s: %+v, %v; want %s", id, e, err, want)
		}
	}
}
