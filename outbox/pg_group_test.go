package outbox

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// insertTracer counts the inserts of entries a pool sends.
type insertTracer struct {
	mu      sync.Mutex
	inserts int
}

func (c *insertTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "INSERT INTO labelprinter_outbox_entries") {
		c.mu.Lock()
		c.inserts++
		c.mu.Unlock()
	}
	return ctx
}

func (c *insertTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *insertTracer) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inserts
}

// holdID inserts id in queue in a transaction it leaves open: an insert of the same ID waits
// for its end, and with it the batch that carries it.
func holdID(t *testing.T, dsn, queue, id string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO labelprinter_outbox_entries (queue, id, printer, kind, expire_after, state)
		VALUES ($1, $2, 'p', 'printJob', 1, 'pending')`, queue, id); err != nil {
		t.Fatal(err)
	}
	return tx
}

// waitLockWaiters waits until n of the server's sessions wait for a lock.
func waitLockWaiters(t *testing.T, dsn string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d inserts waiting for a lock", n), func() bool { return lockWaiters(t, dsn) == n })
}

// groupQueues opens n queues q0.. on dsn sharing one listener, each pool traced by tr; the
// listener connects to listen.
func groupQueues(t *testing.T, dsn, listen string, n int, tr pgx.QueryTracer) []*Outbox {
	t.Helper()
	l, err := NewPostgresListener(listen)
	if err != nil {
		t.Fatal(err)
	}
	var obs []*Outbox
	for i := range n {
		obs = append(obs, openPG(t, dsn, fmt.Sprintf("q%d", i), nil, WithListener(l), withTracer(tr)))
	}
	return obs
}

// addResult is one Enqueue's answer.
type addResult struct {
	e   Entry
	err error
}

// enqueueAsync enqueues in on ob in a goroutine of its own and answers on the channel.
func enqueueAsync(ctx context.Context, ob *Outbox, in Intent) chan addResult {
	c := make(chan addResult, 1)
	go func() {
		e, err := ob.Enqueue(ctx, in)
		c <- addResult{e, err}
	}()
	return c
}

// waitQueued waits until n adds of ob's group wait for a batch.
func waitQueued(t *testing.T, ob *Outbox, n int) {
	t.Helper()
	g := ob.store.(*pgStore).groups.adds
	waitFor(t, fmt.Sprintf("%d adds waiting", n), func() bool { return g.Waiting() == n })
}

func countRows(t *testing.T, dsn, queue, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM labelprinter_outbox_entries WHERE queue = $1 AND id = $2`, queue, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgresAddsShareStatement: the adds of a process's queues on one listener and DSN that
// arrive while an insert is in flight are inserted in one statement, each answered as alone:
// a new ID with its entry, an ID already there with that entry, and a second add of an ID in
// the same wait with the first's entry (it goes in a batch of its own, after).
func TestPostgresAddsShareStatement(t *testing.T) {
	dsn := pgtest.DSN(t)
	tr := &insertTracer{}
	obs := groupQueues(t, dsn, dsn, 3, tr)
	job := labelprinter.PrintJob{LabelName: "L", Copies: 1}
	ctx := context.Background()
	old, err := obs[1].Enqueue(ctx, Intent{ID: "old", Printer: "p", Job: job})
	if err != nil {
		t.Fatal(err)
	}
	tx := holdID(t, dsn, "q0", "first")
	first := enqueueAsync(ctx, obs[0], Intent{ID: "first", Printer: "p", Job: job})
	waitLockWaiters(t, dsn, 1)
	before := tr.count()
	type add struct {
		ob *Outbox
		id string
	}
	adds := []add{{obs[1], "a"}, {obs[2], "b"}, {obs[0], "c"}, {obs[0], "c"}, {obs[1], "old"}}
	var answers []chan addResult
	for i, a := range adds {
		answers = append(answers, enqueueAsync(ctx, a.ob, Intent{ID: a.id, Printer: "p", Job: job}))
		waitQueued(t, obs[0], i+1)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	got := make([]addResult, len(adds))
	for i, c := range answers {
		got[i] = <-c
		if got[i].err != nil {
			t.Fatalf("Enqueue %q: %v", adds[i].id, got[i].err)
		}
		if got[i].e.ID != adds[i].id || got[i].e.State != Pending {
			t.Errorf("Enqueue %q: %+v", adds[i].id, got[i].e)
		}
	}
	// The four waiting IDs in one statement, the second "c" in one after it.
	if n := tr.count() - before; n != 2 {
		t.Errorf("%d adds made while an insert was in flight took %d inserts, want 2", len(adds), n)
	}
	if got[2].e.Enqueued != got[3].e.Enqueued {
		t.Errorf("two adds of one ID: %+v and %+v, want one entry", got[2].e, got[3].e)
	}
	if got[4].e.Enqueued != old.Enqueued {
		t.Errorf("an add of an ID already there: %+v, want the entry there %+v", got[4].e, old)
	}
	for q, id := range map[string]string{"q0": "c", "q1": "a", "q2": "b"} {
		if n := countRows(t, dsn, q, id); n != 1 {
			t.Errorf("%s/%s stored %d times", q, id, n)
		}
	}
}

// TestPostgresAddBatchLost: a batch whose statement went out and whose answer never came (the
// connection reset under it) fails every add in it, saying each may or may not be stored;
// the same IDs enqueued again each end up stored once.
func TestPostgresAddBatchLost(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.Start(t, u.Host)
	u.Host = proxy.Addr()
	tr := &insertTracer{}
	obs := groupQueues(t, u.String(), dsn, 3, tr)
	job := labelprinter.PrintJob{LabelName: "L", Copies: 1}
	ctx := context.Background()
	tx := holdID(t, dsn, "q0", "first")
	first := enqueueAsync(ctx, obs[0], Intent{ID: "first", Printer: "p", Job: job})
	waitLockWaiters(t, dsn, 1)
	ids := []string{"a", "b", "c"}
	var answers []chan addResult
	for i, id := range ids {
		answers = append(answers, enqueueAsync(ctx, obs[i], Intent{ID: id, Printer: "p", Job: job}))
		waitQueued(t, obs[0], i+1)
	}
	cut := proxy.SetAfter([]byte("INSERT INTO labelprinter_outbox_entries"), faultproxy.Reset)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	for i, c := range answers {
		r := <-c
		if r.err == nil || !strings.Contains(r.err.Error(), "may or may not be stored") {
			t.Errorf("Enqueue %q in a batch whose answer was lost: %v, want an error saying it may or may not be stored", ids[i], r.err)
		}
	}
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("no insert went out after the held one")
	}
	proxy.Set(faultproxy.Pass)
	for i, id := range ids {
		// A pool's connections that the reset cut fail their next use, saying nothing was
		// stored: that is safe to try again.
		for try := 0; ; try++ {
			_, err := obs[i].Enqueue(ctx, Intent{ID: id, Printer: "p", Job: job})
			if err == nil {
				break
			}
			if try == 20 || !strings.Contains(err.Error(), "nothing was stored") {
				t.Fatalf("Enqueue %q again: %v", id, err)
			}
		}
		if n := countRows(t, dsn, fmt.Sprintf("q%d", i), id); n != 1 {
			t.Errorf("%q stored %d times", id, n)
		}
	}
}

// TestPostgresAddEndedInBatch: an add whose context ends before its batch left is taken out,
// and nothing of it is stored; one whose context ends while its batch is in flight is
// answered at once with the context's error, saying it may or may not be stored, and the
// batch's outcome decides: here the batch commits, and the entry is there.
func TestPostgresAddEndedInBatch(t *testing.T) {
	dsn := pgtest.DSN(t)
	obs := groupQueues(t, dsn, dsn, 3, &insertTracer{})
	job := labelprinter.PrintJob{LabelName: "L", Copies: 1}
	ctx := context.Background()
	// Two transactions hold IDs of q0 uncommitted: an insert of either waits for its end.
	tx0, tx1 := holdID(t, dsn, "q0", "h0"), holdID(t, dsn, "q0", "h1")
	first := enqueueAsync(ctx, obs[0], Intent{ID: "h0", Printer: "p", Job: job})
	waitLockWaiters(t, dsn, 1)
	second := enqueueAsync(ctx, obs[0], Intent{ID: "h1", Printer: "p", Job: job})
	waitQueued(t, obs[0], 1)
	flyCtx, flyEnd := context.WithCancel(ctx)
	defer flyEnd()
	flying := enqueueAsync(flyCtx, obs[1], Intent{ID: "flying", Printer: "p", Job: job})
	waitQueued(t, obs[0], 2)
	goneCtx, goneEnd := context.WithCancel(ctx)
	gone := enqueueAsync(goneCtx, obs[2], Intent{ID: "gone", Printer: "p", Job: job})
	waitQueued(t, obs[0], 3)

	goneEnd()
	r := <-gone
	if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "nothing was stored") {
		t.Errorf("an add ended before its batch left: %v, want context.Canceled and nothing stored", r.err)
	}
	if err := tx0.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	waitLockWaiters(t, dsn, 1) // the second batch's
	flyEnd()
	select {
	case r := <-flying:
		if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "may or may not be stored") {
			t.Errorf("an add ended while its batch was in flight: %v, want context.Canceled and may or may not be stored", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an add ended while its batch was in flight was not answered until the batch was")
	}
	if err := tx1.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-second; r.err != nil {
		t.Fatal(r.err)
	}
	if e, err := obs[1].Get("flying"); err != nil || e.State != Pending {
		t.Errorf("the entry of an add ended in flight, its batch committed: %+v, %v; want it stored", e, err)
	}
	if _, err := obs[2].Get("gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the entry of an add ended before its batch left: %v, want ErrNotFound", err)
	}
}

// lockWaiters counts the server's sessions waiting for a lock.
func lockWaiters(t *testing.T, dsn string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
