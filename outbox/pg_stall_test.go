package outbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresPausedTransactionHoldsOneLane: a process frozen (SIGSTOP, a paused VM) in the
// middle of a transaction on a lane's row, or on an entry it left Sending, keeps that row
// locked until it goes on. Another Run leaves that lane alone and delivers the others
// meanwhile, instead of waiting for the lock.
func TestPostgresPausedTransactionHoldsOneLane(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSimWith(t, nil, "line1", "line2", "line3")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The frozen process: its leases on line1 and line3 ran out, and its transaction holds
	// line1's row and the entry it left Sending on line3.
	ob := openPG(t, dsn, "q", newClient(t, srv.URL))
	sqlExec(t, dsn, `INSERT INTO labelprinter_outbox_lanes (queue, printer, owner, lease_until)
		VALUES ('q', 'line1', 'frozen', now() - interval '1 second'), ('q', 'line3', 'frozen', now() - interval '1 second')`)
	enqueue(t, ob, Intent{ID: "stuck", Printer: "line3", Job: job("stuck")})
	sqlExec(t, dsn, `UPDATE labelprinter_outbox_entries SET state = 'sending' WHERE id = 'stuck'`)
	frozen, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer frozen.Close(context.Background())
	tx, err := frozen.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT 1 FROM labelprinter_outbox_lanes WHERE printer = 'line1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM labelprinter_outbox_entries WHERE id = 'stuck' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	enqueue(t, ob, Intent{ID: "held", Printer: "line1", Job: job("held")})
	enqueue(t, ob, Intent{ID: "free", Printer: "line2", Job: job("free")})
	running(t, ob)
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if e, err := ob.Wait(wctx, "free"); err != nil || e.State != Sent {
		t.Fatalf("free: %+v, %v; the other lane waited for the frozen transaction", e.State, err)
	}
	if got := rec.received(); !slices.Equal(got, []string{"free"}) {
		t.Errorf("received %v while line1's row is locked, want only free", got)
	}
	// Once the frozen process goes on (here: its transaction ends), the lanes are taken.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wctx2, wcancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel2()
	if e, err := ob.Wait(wctx2, "held"); err != nil || e.State != Sent {
		t.Fatalf("held: %+v, %v", e.State, err)
	}
	if e, err := ob.Wait(wctx2, "stuck"); err != nil || e.State != Unknown {
		t.Fatalf("stuck: %+v, %v; want unknown", e.State, err)
	}
}
