package outbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// This file holds the file store: the entries in one bbolt file that one Outbox owns.

// boltStore keeps the entries in a bbolt file: one bucket of records by sequence number, one
// of IDs, one of the tombstones of pruned entries, and the indexes of boltindex.go.
type boltStore struct {
	db   *bolt.DB
	path string
	hook commitHook

	// writers counts writes in flight: a lone write commits at once, concurrent ones are
	// grouped by bbolt's Batch.
	writers atomic.Int32
	// curTx is the write transaction whose commit handler is registered, and curChanges the
	// records it changed; they are only touched inside write transactions, which bbolt runs
	// one at a time.
	curTx      *bolt.Tx
	curChanges *txChanges
}

// commitHook is how a store tells the Outbox of its commits.
type commitHook struct {
	// first is called with the ID of the first transaction the store commits (bbolt) or of the
	// first change it will report; committed IDs follow it without a gap.
	first func(id uint64)
	// committed is called after every commit with the records it changed, in any order of
	// IDs; the notifier puts them back in order.
	committed func(id uint64, recs []*record)
}

// openBolt opens (or creates) the file at path, brings its format up to this one, turns the
// entries left Sending into Unknown and returns them, with the Pending entries to index.
func openBolt(path string, hook commitHook, now time.Time) (s *boltStore, unknown, pending []*record, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, nil, nil, fmt.Errorf("%w: %s", ErrLocked, path)
		case errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
			return nil, nil, nil, fmt.Errorf("outbox: %w", err)
		}
		return nil, nil, nil, fmt.Errorf("outbox: %s is not an outbox file: %w", path, err)
	}
	db.MaxBatchDelay = batchDelay
	db.MaxBatchSize = batchSize
	s = &boltStore{db: db, path: path, hook: hook}
	unknown, pending, err = s.load(now)
	if err != nil {
		_ = db.Close()
		return nil, nil, nil, err
	}
	return s, unknown, pending, nil
}

// load checks the file's format (creating the buckets of a new file, and bringing a file of
// the first format up to this one), turns Sending entries to Unknown and collects the Pending
// ones, in one transaction.
func (s *boltStore) load(now time.Time) (unknown, pending []*record, err error) {
	path := s.path
	err = s.db.Update(func(tx *bolt.Tx) error {
		s.track(tx)
		if s.hook.first != nil {
			// The first transaction: the notifier counts commits from here.
			s.hook.first(uint64(tx.ID()))
		}
		unknown, pending = unknown[:0], pending[:0]
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			empty := true
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return fmt.Errorf("outbox: %s is not an outbox file: a bbolt database without the outbox's buckets", path)
			}
			m, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			if err := m.Put(keyFormat, []byte(formatVersion)); err != nil {
				return err
			}
			for _, b := range append([][]byte{bucketEntries, bucketIDs, bucketPruned}, indexBuckets...) {
				if _, err := tx.CreateBucket(b); err != nil {
					return err
				}
			}
			return nil
		}
		switch f := meta.Get(keyFormat); {
		case bytes.Equal(f, []byte(formatVersion)):
			// The first files of this format were written before every index was kept.
			for _, name := range indexBuckets {
				if tx.Bucket(name) == nil && tx.Bucket(bucketEntries) != nil {
					if err := buildIndexes(tx); err != nil {
						return fmt.Errorf("%w (in %s)", err, path)
					}
					if err := buildUnacked(tx); err != nil {
						return fmt.Errorf("%w (in %s)", err, path)
					}
					break
				}
			}
		case bytes.Equal(f, []byte(formatV2)), bytes.Equal(f, []byte(formatV1)):
			// The first format lacks kinds and pruned IDs, and both lack the indexes; their
			// entries read unchanged. The indexes are built from the entries once, and the new
			// mark keeps a version that would not keep them from writing the file afterwards.
			if _, err := tx.CreateBucketIfNotExists(bucketPruned); err != nil {
				return err
			}
			if tx.Bucket(bucketEntries) == nil {
				return fmt.Errorf("outbox: %s is not an outbox file: buckets missing", path)
			}
			if err := buildIndexes(tx); err != nil {
				return fmt.Errorf("%w (in %s)", err, path)
			}
			if err := buildUnacked(tx); err != nil {
				return fmt.Errorf("%w (in %s)", err, path)
			}
			if err := meta.Put(keyFormat, []byte(formatVersion)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("outbox: %s has format %q; this version reads %q, %q and %q", path, f, formatVersion, formatV2, formatV1)
		}
		entries, open := tx.Bucket(bucketEntries), tx.Bucket(bucketOpen)
		if entries == nil || tx.Bucket(bucketIDs) == nil || tx.Bucket(bucketPruned) == nil || open == nil || tx.Bucket(bucketCounts) == nil || tx.Bucket(bucketUnacked) == nil || tx.Bucket(bucketFinal) == nil {
			return fmt.Errorf("outbox: %s is not an outbox file: buckets missing", path)
		}
		// Only sending and pending entries are needed here, which the index names: a settled
		// one (most of a file that has run for long) is not read at all.
		var sending []*record
		c := open.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if st := State(v); st != Sending && st != Pending {
				continue
			}
			r, err := decodeRecord(entries.Get(k))
			if err != nil {
				return fmt.Errorf("%w (in %s)", err, path)
			}
			switch r.State {
			case Sending:
				sending = append(sending, r)
			case Pending:
				pending = append(pending, r)
			default:
				return fmt.Errorf("outbox: %s: entry %q is %s, and its index says %s: the index is damaged", path, r.ID, r.State, v)
			}
		}
		for _, r := range sending {
			orphaned(r, now)
			if err := putRecord(tx, seqKey(r.Seq), r); err != nil {
				return err
			}
			s.changed(r)
			unknown = append(unknown, r)
		}
		return nil
	})
	return unknown, pending, err
}

// write commits fn durably. A write with no other in flight commits at once; concurrent ones
// go through bbolt's Batch, which runs them in one transaction and one fsync. Batch may run fn
// more than once, so fn must set everything it reports from scratch on each run.
func (s *boltStore) write(fn func(*bolt.Tx) error) error {
	tracked := func(tx *bolt.Tx) error {
		s.track(tx)
		return fn(tx)
	}
	defer s.writers.Add(-1)
	if s.writers.Add(1) == 1 {
		return s.db.Update(tracked)
	}
	return s.db.Batch(tracked)
}

// track registers the commit handler of tx once, however many batched writes share it: it
// hands the transaction's changes to the Outbox. bbolt runs write transactions one at a time,
// so curTx and curChanges need no lock of their own.
func (s *boltStore) track(tx *bolt.Tx) {
	if s.curTx == tx {
		return
	}
	ch := &txChanges{id: uint64(tx.ID())}
	s.curTx, s.curChanges = tx, ch
	tx.OnCommit(func() { s.hook.committed(ch.id, ch.recs) })
}

// changed records r as changed by the current write transaction. It is only called inside
// write transactions, after track; r must not be modified afterwards.
func (s *boltStore) changed(r *record) {
	s.curChanges.recs = append(s.curChanges.recs, r)
}

// lookup reads the record of id.
func (s *boltStore) lookup(_ context.Context, id string) (*record, error) {
	var r *record
	err := s.db.View(func(tx *bolt.Tx) error {
		k := tx.Bucket(bucketIDs).Get([]byte(id))
		if k == nil {
			return boltNotFound(tx, id)
		}
		var err error
		r, err = decodeRecord(tx.Bucket(bucketEntries).Get(k))
		return err
	})
	return r, err
}

// add stores r under the next sequence number unless its ID is taken (the entry there is
// returned) or pruned (an error matching ErrPruned).
func (s *boltStore) add(ctx context.Context, in *record) (*record, bool, error) {
	// A repeated ID is answered from a read, which costs no commit.
	if r, err := s.lookup(ctx, in.ID); err == nil {
		return r, false, nil
	} else if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrPruned) {
		return nil, false, err
	}
	var (
		stored  *record
		created bool
	)
	err := s.write(func(tx *bolt.Tx) error {
		stored, created = nil, false
		entries, ids := tx.Bucket(bucketEntries), tx.Bucket(bucketIDs)
		if k := ids.Get([]byte(in.ID)); k != nil {
			r, err := decodeRecord(entries.Get(k))
			if err != nil {
				return err
			}
			stored = r
			return nil
		}
		if err := boltPruned(tx, in.ID); err != nil {
			return err
		}
		seq, err := entries.NextSequence()
		if err != nil {
			return err
		}
		r := *in
		r.Seq = seq
		key := seqKey(seq)
		if err := putRecord(tx, key, &r); err != nil {
			return err
		}
		if err := ids.Put([]byte(in.ID), key); err != nil {
			return err
		}
		stored, created = &r, true
		s.changed(&r)
		return nil
	})
	return stored, created, err
}

// list reads the entries in the given states (all with none), in sequence order: through the
// index when they are all states it holds, so that settled entries are not read.
func (s *boltStore) list(_ context.Context, states []State) ([]*record, error) {
	var out []*record
	err := s.db.View(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		if allIndexed(states) {
			return tx.Bucket(bucketOpen).ForEach(func(k, v []byte) error {
				if !containsState(states, State(v)) {
					return nil
				}
				r, err := decodeRecord(entries.Get(k))
				if err != nil {
					return err
				}
				out = append(out, r)
				return nil
			})
		}
		return entries.ForEach(func(_, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			if len(states) > 0 && !containsState(states, r.State) {
				return nil
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// change applies f to the record of id and commits it with Updated set to now; f's error
// leaves the record as it was.
func (s *boltStore) change(_ context.Context, id string, now time.Time, f func(*record) error) (*record, error) {
	var done *record
	err := s.write(func(tx *bolt.Tx) error {
		done = nil
		entries := tx.Bucket(bucketEntries)
		k := tx.Bucket(bucketIDs).Get([]byte(id))
		if k == nil {
			return boltNotFound(tx, id)
		}
		r, err := decodeRecord(entries.Get(k))
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
		r.Updated = now
		if err := putRecord(tx, k, r); err != nil {
			return err
		}
		s.changed(r)
		done = r
		return nil
	})
	return done, err
}

// update applies f to the records of seqs, in one commit, writing those f returns true for
// with Updated set to now, and returns them.
func (s *boltStore) update(seqs []uint64, now time.Time, f func(*record) bool) ([]*record, error) {
	var changed []*record
	err := s.write(func(tx *bolt.Tx) error {
		changed = changed[:0]
		entries := tx.Bucket(bucketEntries)
		for _, seq := range seqs {
			k := seqKey(seq)
			r, err := decodeRecord(entries.Get(k))
			if err != nil {
				return err
			}
			if !f(r) {
				continue
			}
			r.Updated = now
			if err := putRecord(tx, k, r); err != nil {
				return err
			}
			s.changed(r)
			changed = append(changed, r)
		}
		return nil
	})
	return changed, err
}

func (s *boltStore) expire(_ context.Context, items []*item, now time.Time, f func(*record) bool) ([]*record, error) {
	seqs := make([]uint64, len(items))
	for i, it := range items {
		seqs[i] = it.seq
	}
	return s.update(seqs, now, f)
}

func (s *boltStore) begin(_ context.Context, it *item, now time.Time, f func(*record) bool) (*record, error) {
	recs, err := s.update([]uint64{it.seq}, now, f)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return recs[0], nil
}

func (s *boltStore) finish(_ context.Context, r *record) error {
	return s.write(func(tx *bolt.Tx) error {
		if err := putRecord(tx, seqKey(r.Seq), r); err != nil {
			return err
		}
		s.changed(r)
		return nil
	})
}

// prune removes the final entries last changed more than olderThan before now, keeping a
// tombstone of each under its ID, stamped with the time of the prune.
func (s *boltStore) prune(_ context.Context, now time.Time, olderThan time.Duration) (int, error) {
	cutoff, stamp := now.Add(-olderThan), now.UTC().Round(0)
	var n int
	err := s.write(func(tx *bolt.Tx) error {
		n = 0
		entries, ids, gone := tx.Bucket(bucketEntries), tx.Bucket(bucketIDs), tx.Bucket(bucketPruned)
		var doomed [][]byte
		var doomedRecs []*pruneHead
		// The index of final entries by their last change names those old enough to go; the
		// others are not read.
		c := tx.Bucket(bucketFinal).Cursor()
		end := finalKey(cutoff, nil)
		for fk, _ := c.First(); fk != nil && bytes.Compare(fk[:8], end) < 0; fk, _ = c.Next() {
			k := bytes.Clone(fk[8:])
			// The ID, state and time alone: no job or answer is decoded.
			r := new(pruneHead)
			if err := json.Unmarshal(entries.Get(k), r); err != nil || r.ID == "" || !r.State.final() {
				return fmt.Errorf("outbox: unreadable entry, or its index is damaged (sequence %d)", binary.BigEndian.Uint64(k))
			}
			if r.Updated.Before(cutoff) {
				doomed = append(doomed, k)
				doomedRecs = append(doomedRecs, r)
			}
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
			if err := deleteRecord(tx, k); err != nil {
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

// pruneHead is what prune reads of an entry.
type pruneHead struct {
	ID      string    `json:"id"`
	State   State     `json:"state"`
	Updated time.Time `json:"updated"`
}

// forget drops the tombstones of entries pruned more than olderThan before now.
func (s *boltStore) forget(_ context.Context, now time.Time, olderThan time.Duration) (int, error) {
	cutoff := now.Add(-olderThan)
	var n int
	err := s.write(func(tx *bolt.Tx) error {
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

// unacknowledged reads the settled entries not acknowledged in their current state.
func (s *boltStore) unacknowledged(context.Context) ([]*record, error) {
	var out []*record
	err := s.db.View(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		return tx.Bucket(bucketUnacked).ForEach(func(k, _ []byte) error {
			r, err := decodeRecord(entries.Get(k))
			if err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// acknowledge takes each entry of acks whose state and attempts are still the ack's out of
// the unacknowledged ones, in one commit.
func (s *boltStore) acknowledge(_ context.Context, acks []Ack) error {
	return s.write(func(tx *bolt.Tx) error {
		ids, unacked := tx.Bucket(bucketIDs), tx.Bucket(bucketUnacked)
		for _, a := range acks {
			k := ids.Get([]byte(a.ID))
			if k == nil {
				continue // pruned since
			}
			if v := unacked.Get(k); v != nil && bytes.Equal(v, ackMark(a.State, a.Attempts)) {
				if err := unacked.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// counts reads the count of every printer's entries in each state, kept with every change.
func (s *boltStore) counts(context.Context) (map[string]map[State]int, error) {
	var out map[string]map[State]int
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = readCounts(tx)
		return err
	})
	return out, err
}

func (s *boltStore) close() error { return s.db.Close() }

// boltPruned returns an error matching ErrPruned (and ErrNotFound) when id is the ID of a
// pruned entry, and nil otherwise.
func boltPruned(tx *bolt.Tx, id string) error {
	v := tx.Bucket(bucketPruned).Get([]byte(id))
	if v == nil {
		return nil
	}
	var ts tombstone
	if err := json.Unmarshal(v, &ts); err != nil {
		return fmt.Errorf("%w: %q: %w (its record is unreadable: %v)", ErrNotFound, id, ErrPruned, err)
	}
	return prunedError(id, ts)
}

// boltNotFound is the error for an id with no entry: ErrNotFound, and ErrPruned too when it
// is the ID of a pruned entry.
func boltNotFound(tx *bolt.Tx, id string) error {
	if err := boltPruned(tx, id); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}
