package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/fence"
)

// This file holds what a Run on a queue in PostgreSQL may do under a lane's lease: the lease is
// certain until the send time of its last successful acquire or renewal plus 4/5 of the TTL, by
// this host's monotonic clock (internal/fence), and a printer's request is written only before
// then. The lease rows themselves are pg.go's.

// errLaneLost ends a lane's lease when a renewal finds it gone: its Run gave it up, it ran out
// by the database's clock, or another Run holds it.
var errLaneLost = errors.New("outbox: the lane's lease was found gone when renewing it")

// errLanesLeft ends the leases of a Run that returned.
var errLanesLeft = errors.New("outbox: the run gave up its lanes")

// laneLeases is a Run's certain hold on the lanes whose lease rows it holds: one fence.Lease
// per lane, from an acquire or renewal that came back in time. A lane held by the database
// but not here (its acquire or renewal came back after its deadline) is not acted on until a
// renewal comes back in time; the Run renews it at once and does not give it up for that.
type laneLeases struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*fence.Lease
}

// renewed records an acquire or renewal of printer's lane, sent at sent, that succeeded. It
// reports whether the lane is held for certain now.
func (ll *laneLeases) renewed(printer string, sent time.Time) bool {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if l := ll.m[printer]; l != nil {
		if l.Renewed(sent) {
			return true
		}
		delete(ll.m, printer) // it expired: only a renewal that came back in time starts anew
	}
	l := fence.Start(ll.ttl, sent)
	if l == nil {
		return false
	}
	if ll.m == nil {
		ll.m = map[string]*fence.Lease{}
	}
	ll.m[printer] = l
	return true
}

// lost ends printer's lease: a renewal or a claim found it gone. Requests of the lane not yet
// written are cut off at once.
func (ll *laneLeases) lost(printer string) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if l := ll.m[printer]; l != nil {
		l.Lose(errLaneLost)
		delete(ll.m, printer)
	}
}

// keep ends the lease of every lane not in held.
func (ll *laneLeases) keep(held map[string]bool) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	for p, l := range ll.m {
		if !held[p] {
			l.Lose(errLaneLost)
			delete(ll.m, p)
		}
	}
}

// leaveAll ends every lease: the Run gave its lanes up.
func (ll *laneLeases) leaveAll() {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	for p, l := range ll.m {
		l.Lose(errLanesLeft)
		delete(ll.m, p)
	}
}

// lease returns printer's lease when it is held for certain now, and nil otherwise.
func (ll *laneLeases) lease(printer string) *fence.Lease {
	ll.mu.Lock()
	l := ll.m[printer]
	ll.mu.Unlock()
	if l == nil || !l.Held() {
		return nil
	}
	return l
}

// certain reports whether printer's lane is held for certain now.
func (ll *laneLeases) certain(printer string) bool { return ll.lease(printer) != nil }

// fencedStore is a store whose lanes are held under leases (pgStore): a request goes out only
// under its lane's lease, bound with BoundToWrite.
type fencedStore interface {
	// laneLease returns the lease of printer's lane when it is held for certain now, and nil
	// otherwise.
	laneLease(printer string) *fence.Lease
}

// leaseRanOut turns r, found Sending in a lane whose holder's lease ran out, into Unknown. The
// Run taking the lane over cannot tell a holder that stopped from one that was cut off from the
// database or the printer; either way that holder no longer writes the request, which it only
// ever does before 4/5 of its lease.
func leaseRanOut(r *record) {
	r.State = Unknown
	r.Error = "the lease of the run sending it ran out while it was sending (that run stopped, or was cut off from the database); " +
		"it may or may not have reached the printer, and that run no longer sends it"
}

// notWrittenText is the error of an entry whose request the lane's lease cut off before it was
// written.
const notWrittenText = "not sent: the lane's lease was not renewed in time, and the request was stopped before it was written"

// errCut is the error of a request its lane's lease stopped before it was written.
var errCut = errors.New("outbox: " + notWrittenText)

// sendLeased makes rec's request under its lane's lease (fence.BoundToWrite): it is written
// only while the lease is certain, and a request written in time is left to bring its answer
// even if the lease ends meanwhile. It returns how far the request got; a request the lease
// stopped before it was written returns an error matching errCut, and the printer never gets
// it from this Run.
func (o *Outbox) sendLeased(ctx context.Context, fs fencedStore, rec *record) (json.RawMessage, fence.Written, error) {
	lease := fs.laneLease(rec.Printer)
	if lease == nil {
		// Sending was committed, but the renewal that did it came back after its deadline.
		o.logCut(rec)
		return nil, fence.NotWritten, errCut
	}
	lctx, call := lease.BoundToWrite(ctx)
	resp, err := o.send(lctx, rec)
	stopped := err != nil && lctx.Err() != nil && ctx.Err() == nil && lease.Err() != nil
	call.End()
	_, n, last := call.Attempts()
	written := last
	if n > 0 {
		written = fence.WasWritten
	}
	if stopped && written == fence.NotWritten {
		o.logCut(rec)
		return nil, written, errCut
	}
	return resp, written, err
}

// logCut logs a request its lane's lease stopped before it was written.
func (o *Outbox) logCut(rec *record) {
	if o.log == nil {
		return
	}
	o.log.LogAttrs(context.Background(), slog.LevelWarn, "outbox: the lane's lease was not renewed in time; the request was stopped before it was written",
		slog.String("id", rec.ID), slog.String("printer", rec.Printer), slog.String("written", fence.NotWritten.String()))
}

// finishCut keeps trying to commit r, a request stopped before it was written, as Pending,
// after the first try failed with err (the database is out of reach: often the same outage
// that stopped the request). Until it is committed the entry stays in flight for this Run, so
// a Run that takes its own lane back keeps it Sending instead of making it Unknown: this Run
// knows the printer never got it. It returns nil once committed, errLateOutcome when another
// Run has made the entry its own meanwhile, and the last error once ctx ends (then the entry
// stays Sending, and whoever takes the lane makes it Unknown).
func (o *Outbox) finishCut(ctx context.Context, r *record, err error) error {
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelWarn, "outbox: recording a request stopped before it was written as pending failed; retrying",
			slog.String("id", r.ID), slog.String("printer", r.Printer), slog.String("error", err.Error()))
	}
	wait := 100 * time.Millisecond
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(wait*2, 5*time.Second)
		if err = o.store.finish(ctx, r); err == nil || errors.Is(err, errLateOutcome) {
			return err
		}
	}
}
