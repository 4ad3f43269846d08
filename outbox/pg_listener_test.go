package outbox

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// listeners counts the server's connections whose last statement was a LISTEN or UNLISTEN on
// one of the channels of obs.
func listeners(t *testing.T, dsn string, obs ...*Outbox) int {
	t.Helper()
	var stmts []string
	for _, ob := range obs {
		ch := pgx.Identifier{ob.store.(*pgStore).channel}.Sanitize()
		stmts = append(stmts, "LISTEN "+ch, "UNLISTEN "+ch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query = ANY($1)`, stmts).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgresSharedListener: three queues opened with one PostgresListener listen on one
// connection, where each had its own; each hears its own changes and no other's, Wait and
// WithStateChange included; after the listener's connection is cut, each hears what comes
// next; the last queues on it go on after the first is closed; once all are closed, no
// connection listens.
func TestPostgresSharedListener(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv, rec := startSimWith(t, nil, "line0", "line1", "line2")
	l, err := NewPostgresListener(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var obs []*Outbox
	var logs []*changeLog
	for i := range 3 {
		log := &changeLog{}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ob, err := OpenPostgres(ctx, dsn, fmt.Sprintf("q%d", i), newClient(t, srv.URL),
			WithListener(l), WithStateChange(log.add), WithRetryInterval(10*time.Millisecond))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		obs, logs = append(obs, ob), append(logs, log)
	}
	closed := make([]bool, len(obs))
	t.Cleanup(func() {
		for i, ob := range obs {
			if !closed[i] {
				ob.Close()
			}
		}
	})
	if n := listeners(t, dsn, obs...); n != 1 {
		t.Errorf("%d connections listen for the 3 queues, want 1", n)
	}
	// Each queue's entries, delivered by its own Run, told to its own callback only: every
	// change, or, where the connection was cut (skipped), what a read-back tells: the changes
	// in order, ending with sent, a state in between perhaps skipped.
	told := func(got []State, skipped bool) bool {
		if !skipped {
			return slices.Equal(got, []State{Pending, Sending, Sent})
		}
		return slices.Equal(got, []State{Pending, Sending, Sent}) || slices.Equal(got, []State{Pending, Sent}) ||
			slices.Equal(got, []State{Sending, Sent}) || slices.Equal(got, []State{Sent})
	}
	deliver := func(round string, skipped bool, which ...int) {
		t.Helper()
		for _, i := range which {
			id := fmt.Sprintf("%s-q%d", round, i)
			enqueue(t, obs[i], Intent{ID: id, Printer: fmt.Sprintf("line%d", i), Job: job(id)})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			e, err := obs[i].Wait(ctx, id)
			cancel()
			if err != nil || e.State != Sent {
				t.Fatalf("%s: %+v, %v", id, e, err)
			}
		}
		for _, i := range which {
			id := fmt.Sprintf("%s-q%d", round, i)
			deadline := time.Now().Add(10 * time.Second)
			for !told(statesOf(logs[i], id), skipped) {
				if time.Now().After(deadline) {
					t.Fatalf("queue %d told %v of %s, want pending, sending, sent", i, statesOf(logs[i], id), id)
				}
				time.Sleep(5 * time.Millisecond)
			}
			for j, log := range logs {
				if j != i && len(statesOf(log, id)) > 0 {
					t.Errorf("queue %d was told of %s, queue %d's", j, id, i)
				}
			}
		}
	}
	for _, ob := range obs {
		running(t, ob)
	}
	deliver("a", false, 0, 1, 2)

	// The listener's connection cut: it connects again and listens for every queue; what was
	// committed meanwhile is read back.
	sqlExec(t, dsn, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`,
		"LISTEN "+pgx.Identifier{obs[2].store.(*pgStore).channel}.Sanitize())
	deliver("b", true, 0, 1, 2)

	obs[0].Close()
	closed[0] = true
	deliver("c", false, 1, 2)
	if n := listeners(t, dsn, obs...); n != 1 {
		t.Errorf("%d connections listen for the 2 queues left, want 1", n)
	}
	for i := 1; i < len(obs); i++ {
		obs[i].Close()
		closed[i] = true
	}
	deadline := time.Now().Add(10 * time.Second)
	for listeners(t, dsn, obs...) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a connection still listens after every queue on the listener was closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := len(rec.received()); got != 8 {
		t.Errorf("the printer received %d jobs, want 8", got)
	}
}
