package outbox

import (
	"container/heap"
	"context"
)

// This file holds the rule for a delivery that goes on to the next entry of its lane: on a
// store where each commit is a round trip (PostgreSQL), the outcome of an entry and the claim
// of the one after it are committed at once, when that one is due and the lane's lease is
// held for certain, as Run would claim it a moment later.

// chainStore is a store that claims the next entry of a lane with the outcome of the entry
// before it (pgStore).
type chainStore interface {
	// finishBegin commits the outcome r, as finish does, and, only if it was committed and
	// the lane's lease is held, applies f to next's record as begin does, in one round trip.
	// err is finish's; next's record is returned when it was claimed, and claimErr is a
	// failure of that claim alone (r's outcome was committed).
	finishBegin(ctx context.Context, r *record, next *item, f func(*record) bool) (rec *record, claimErr, err error)
}

// successor claims the entry after it in its lane, for its delivery to go on with, when that
// entry is due, not past its deadline, and its lane's lease is held for certain; nil when it
// is not, or when Run is ending.
func (o *Outbox) successor(it *item) *item {
	fs, _ := o.store.(fencedStore)
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopping.Load() {
		return nil
	}
	l := o.lanes[it.printer]
	if l == nil || len(l.items) < 2 || l.items[0] != it {
		return nil
	}
	next := l.items[1]
	if next.busy || next.due.After(now) || !next.deadline.After(now) {
		return nil
	}
	if fs != nil && fs.laneLease(next.printer) == nil {
		return nil
	}
	next.busy = true
	if next.heapIdx >= 0 {
		heap.Remove(&o.expiry, next.heapIdx)
	}
	return next
}

// handOver ends the delivery of it, settled, as release does, with its lane still sending:
// next, claimed with its outcome, goes out in the same delivery.
func (o *Outbox) handOver(it, next *item) {
	o.mu.Lock()
	defer o.mu.Unlock()
	it.busy = false
	o.remove(it)
	if l := o.lanes[next.printer]; l != nil {
		l.sending = true
	}
}
