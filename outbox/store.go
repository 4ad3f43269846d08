package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// store keeps the records of one outbox: a bbolt file (boltStore) or a queue in PostgreSQL
// (pgStore). It reads and commits records and nothing more: what a state may become, what an
// answer makes of an entry, the order of a printer's entries and expiry are the Outbox's rules,
// handed to the store as the functions it applies inside its transactions, so they are written
// once for every store.
type store interface {
	// lookup returns the record of id, or an error matching ErrNotFound (and ErrPruned for
	// the ID of a pruned entry).
	lookup(ctx context.Context, id string) (*record, error)
	// add commits r as a new entry under the next sequence number and returns it with true;
	// an ID already taken returns the stored entry and false, the ID of a pruned entry an
	// error matching ErrPruned. Concurrent adds of one ID store one entry.
	add(ctx context.Context, r *record) (*record, bool, error)
	// list returns the records in the given states (every one with none), in sequence order;
	// of pending, sending and unknown alone it reads those entries only.
	list(ctx context.Context, states []State) ([]*record, error)
	// counts returns how many entries each printer has in each state (none: absent), without
	// reading the entries into the process.
	counts(ctx context.Context) (map[string]map[State]int, error)
	// unacknowledged returns the settled records not acknowledged in their current state,
	// in sequence order (every settled one, for a store that keeps no acknowledgements).
	unacknowledged(ctx context.Context) ([]*record, error)
	// acknowledge records acks (a store that keeps none ignores them).
	acknowledge(ctx context.Context, acks []Ack) error
	// change applies f to the record of id and commits it with Updated set to now (or the
	// store's own clock); f's error leaves it as it was and is returned.
	change(ctx context.Context, id string, now time.Time, f func(*record) error) (*record, error)
	// expire applies f to the records of items and commits those it returns true for.
	expire(ctx context.Context, items []*item, now time.Time, f func(*record) bool) ([]*record, error)
	// begin applies f to the record of the claimed it and commits it if f returns true, before
	// the request goes out; nil means the entry is not to be sent now.
	begin(ctx context.Context, it *item, now time.Time, f func(*record) bool) (*record, error)
	// finish commits the outcome r of an entry begin returned.
	finish(ctx context.Context, r *record) error
	// prune removes the final entries last changed more than olderThan before now (or the
	// store's own clock) and keeps their IDs.
	prune(ctx context.Context, now time.Time, olderThan time.Duration) (int, error)
	// forget lets go of the IDs of entries pruned more than olderThan before now (or the
	// store's own clock).
	forget(ctx context.Context, now time.Time, olderThan time.Duration) (int, error)
	close() error
}

// multiLookupStore is a store that reads several IDs at once (pgStore), where each read is a round
// trip.
type multiLookupStore interface {
	// lookupEach returns lookup's answer for each of ids, in their order.
	lookupEach(ctx context.Context, ids []string) ([]*record, []error)
}

// sharedStore is a store that several Outboxes use at once (pgStore). Each printer's lane is
// delivered by the one Outbox holding its lease; the index of an Outbox holds only the lanes
// it holds, and sync brings it up to date.
type sharedStore interface {
	store
	// sync renews the leases this Outbox holds, takes the lanes whose lease is free or ran
	// out, and returns the lanes held with their Pending entries, and the entries it turned
	// Unknown (left Sending by a holder that is gone; inFlight tells which entries this
	// Outbox has on their way).
	sync(ctx context.Context, inFlight func(seq uint64) bool) (laneState, error)
	// release gives up every lease this Outbox holds.
	release(ctx context.Context) error
	// poll is how often a Run syncs.
	poll() time.Duration
	// flush returns once every change committed before it was told.
	flush()
}

// errLateOutcome is finish's error for an answer that came too late to be committed: the entry
// is no longer Sending from this attempt, since another Run took its lane over (or a person
// resent it) while the request was out. Nothing was written.
var errLateOutcome = errors.New("the entry is no longer this attempt's")

// tombstone is what stays of a pruned entry, under its ID.
type tombstone struct {
	State   State     `json:"state"`   // its final state
	Updated time.Time `json:"updated"` // when it reached it
	Pruned  time.Time `json:"pruned"`  // when Prune removed it; ForgetIDs counts from here
}

// prunedError is the error for the ID of a pruned entry: ErrPruned and ErrNotFound.
func prunedError(id string, ts tombstone) error {
	return fmt.Errorf("%w: %q: %w: it was %s at %s and pruned at %s", ErrNotFound, id, ErrPruned,
		ts.State, ts.Updated.Format(time.RFC3339), ts.Pruned.Format(time.RFC3339))
}

// orphaned turns r, found Sending with nobody left to hear the answer, into Unknown: it may or
// may not have reached the printer.
func orphaned(r *record, now time.Time) {
	r.State = Unknown
	r.Updated = now
	r.Error = "the process stopped while the request was being sent; it may or may not have reached the printer"
}
