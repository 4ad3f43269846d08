package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresLateOutcomeAfterResend: a Run that lost its lane while its request was out
// (paused past its lease, say) comes back with the answer after a person resent the entry and
// another Run sent it again. The late answer is the first attempt's: it leaves the second
// attempt's Sending, and that attempt's outcome, alone.
func TestPostgresLateOutcomeAfterResend(t *testing.T) {
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
	if err := sa.finish(ctx, &late); err != nil {
		t.Fatal(err)
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
