package outbox

import (
	"fmt"
	"time"
)

// This file holds what the outbox remembers of the entries it no longer keeps: Prune removes
// settled entries but keeps their IDs, so a sender that repeats an old ID is not printed for
// twice; ForgetIDs lets go of those IDs when the caller says they can no longer come back.

// prunedEnqueue is Enqueue's error for the ID of a pruned entry: ErrPruned, and not
// ErrNotFound, which would read as "nothing known of it".
func prunedEnqueue(id string, err error) error {
	return fmt.Errorf("outbox: enqueue %q: %w; nothing added (%v)", id, ErrPruned, err)
}

// Prune removes the entries in final states (Sent, Rejected, Expired, Cancelled) whose last
// change is older than olderThan, and returns how many it removed. Pending, Sending and
// Unknown entries are never removed. The ID of each removed entry is kept, with its final
// state and the time, so that Enqueue of that ID again adds nothing and returns ErrPruned;
// Get and List no longer see it. ForgetIDs lets go of those IDs.
func (o *Outbox) Prune(olderThan time.Duration) (int, error) {
	if olderThan < 0 {
		return 0, invalid("Prune", "olderThan is negative (%v)", olderThan)
	}
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return 0, errClosed
	}
	ctx, cancel := o.opContext()
	defer cancel()
	return o.store.prune(ctx, o.now(), olderThan)
}

// ForgetIDs lets go of the IDs of entries that Prune removed more than olderThan ago, and
// returns how many it dropped. What the caller gives up: an Enqueue of a forgotten ID is a new
// intent again and is sent again. Call it only for IDs no sender can repeat any more, with
// olderThan longer than the longest time in which an order can be sent again (an ERP's resend
// window, a broker's session expiry); without ForgetIDs the IDs stay, at roughly 100 bytes
// each.
func (o *Outbox) ForgetIDs(olderThan time.Duration) (int, error) {
	if olderThan < 0 {
		return 0, invalid("ForgetIDs", "olderThan is negative (%v)", olderThan)
	}
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return 0, errClosed
	}
	ctx, cancel := o.opContext()
	defer cancel()
	return o.store.forget(ctx, o.now(), olderThan)
}
