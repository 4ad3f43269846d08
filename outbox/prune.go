package outbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// This file holds what the outbox remembers of the entries it no longer keeps: Prune removes
// settled entries but keeps their IDs, so a sender that repeats an old ID is not printed for
// twice; ForgetIDs lets go of those IDs when the caller says they can no longer come back.

// tombstone is what stays of a pruned entry, under its ID.
type tombstone struct {
	State   State     `json:"state"`   // its final state
	Updated time.Time `json:"updated"` // when it reached it
	Pruned  time.Time `json:"pruned"`  // when Prune removed it; ForgetIDs counts from here
}

// pruned returns an error matching ErrPruned (and ErrNotFound) when id is the ID of a pruned
// entry, and nil otherwise.
func pruned(tx *bolt.Tx, id string) error {
	v := tx.Bucket(bucketPruned).Get([]byte(id))
	if v == nil {
		return nil
	}
	var ts tombstone
	if err := json.Unmarshal(v, &ts); err != nil {
		return fmt.Errorf("%w: %q: %w (its record is unreadable: %v)", ErrNotFound, id, ErrPruned, err)
	}
	return fmt.Errorf("%w: %q: %w: it was %s at %s and pruned at %s", ErrNotFound, id, ErrPruned,
		ts.State, ts.Updated.Format(time.RFC3339), ts.Pruned.Format(time.RFC3339))
}

// notFound is the error for an id with no entry: ErrNotFound, and ErrPruned too when it is
// the ID of a pruned entry.
func notFound(tx *bolt.Tx, id string) error {
	if err := pruned(tx, id); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}

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
	now := o.now()
	cutoff := now.Add(-olderThan)
	stamp := now.UTC().Round(0)
	var n int
	err := o.write(func(tx *bolt.Tx) error {
		n = 0
		entries, ids, gone := tx.Bucket(bucketEntries), tx.Bucket(bucketIDs), tx.Bucket(bucketPruned)
		var doomed [][]byte
		var doomedRecs []*record
		err := entries.ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			if r.State.final() && r.Updated.Before(cutoff) {
				doomed = append(doomed, bytes.Clone(k))
				doomedRecs = append(doomedRecs, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, k := range doomed {
			r := doomedRecs[i]
			ts, err := json.Marshal(tombstone{State: r.State, Updated: r.Updated, Pruned: stamp})
			if err != nil {
				return err
			}
			if err := gone.Put([]byte(r.ID), ts); err != nil {
				return err
			}
			if err := entries.Delete(k); err != nil {
				return err
			}
			if err := ids.Delete([]byte(r.ID)); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
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
	cutoff := o.now().Add(-olderThan)
	var n int
	err := o.write(func(tx *bolt.Tx) error {
		n = 0
		gone := tx.Bucket(bucketPruned)
		var doomed [][]byte
		err := gone.ForEach(func(k, v []byte) error {
			var ts tombstone
			// An unreadable tombstone (a damaged file) has no time to judge by; it is kept,
			// since keeping an ID never prints anything twice.
			if json.Unmarshal(v, &ts) == nil && ts.Pruned.Before(cutoff) {
				doomed = append(doomed, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range doomed {
			if err := gone.Delete(k); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
