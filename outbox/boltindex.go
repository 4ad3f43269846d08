package outbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// This file holds the file store's indexes, kept in the transaction of every change of an
// entry, so that a start reads the entries it needs and not the whole history:
//
//   - bucketOpen holds the sequence number of every entry that is pending, sending or unknown,
//     with its state: Open, and List of those states, read these entries alone;
//   - bucketCounts holds how many entries each printer has in each state: Counts reads it
//     alone;
//   - bucketUnacked holds every settled entry not acknowledged in its current state, with its
//     state and attempts: Unacknowledged reads these entries alone;
//   - bucketFinal holds every final entry by the time of its last change: Prune reads the
//     entries old enough to go, and no other.
//
// Every write of an entry goes through putRecord or deleteRecord, which read the state the
// entry had and move it in both. A file of an earlier format has them built when it is opened
// (buildIndexes), before the format mark says they are there.

var (
	bucketOpen    = []byte("open")    // sequence number of a pending, sending or unknown entry -> its state
	bucketCounts  = []byte("counts")  // printer NUL state -> the number of its entries in that state
	bucketUnacked = []byte("unacked") // sequence number of a settled entry not acknowledged -> ackMark
	bucketFinal   = []byte("final")   // finalKey of a final entry -> nothing
)

// indexBuckets are every index; a file lacking one has them all built again.
var indexBuckets = [][]byte{bucketOpen, bucketCounts, bucketUnacked, bucketFinal}

// finalKey orders final entries by their last change, then by sequence number: the time's
// Unix nanoseconds offset by 2^63, so that the bytes sort as the times do.
func finalKey(updated time.Time, seqKey []byte) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(updated.UnixNano())+1<<63)
	return append(k, seqKey...)
}

// ackMark is what an acknowledgement names of an entry: its state and attempts.
func ackMark(s State, attempts int) []byte { return fmt.Appendf(nil, "%s/%d", s, attempts) }

// indexed reports whether entries in state s are in bucketOpen.
func indexed(s State) bool { return s == Pending || s == Sending || s == Unknown }

// allIndexed reports whether every one of states is in bucketOpen (and there is at least one).
func allIndexed(states []State) bool {
	for _, s := range states {
		if !indexed(s) {
			return false
		}
	}
	return len(states) > 0
}

// head is what the indexes know of an entry: its printer and state. The zero head is an
// entry that is not there.
type head struct {
	Printer string    `json:"printer"`
	State   State     `json:"state"`
	Updated time.Time `json:"updated"`
}

func (h head) same(o head) bool {
	return h.Printer == o.Printer && h.State == o.State && h.Updated.Equal(o.Updated)
}

// recordHead reads the printer and state of a stored record without decoding the rest.
func recordHead(b []byte) (head, error) {
	var h head
	if err := json.Unmarshal(b, &h); err != nil || !h.State.valid() {
		return head{}, errors.New("outbox: unreadable entry")
	}
	return h, nil
}

// putRecord stores r under key and moves it in the indexes from the state it had.
func putRecord(tx *bolt.Tx, key []byte, r *record) error {
	entries := tx.Bucket(bucketEntries)
	var old head
	if v := entries.Get(key); v != nil {
		var err error
		if old, err = recordHead(v); err != nil {
			return fmt.Errorf("%w (sequence %d)", err, binary.BigEndian.Uint64(key))
		}
	}
	b, err := r.encode()
	if err != nil {
		return err
	}
	if err := entries.Put(bytes.Clone(key), b); err != nil {
		return err
	}
	// Every write of a settled entry is a state its caller has not heard of yet.
	unacked := tx.Bucket(bucketUnacked)
	if r.State.settled() {
		if err := unacked.Put(bytes.Clone(key), ackMark(r.State, r.Attempts)); err != nil {
			return err
		}
	} else if err := unacked.Delete(key); err != nil {
		return err
	}
	return reindex(tx, key, old, head{Printer: r.Printer, State: r.State, Updated: r.Updated})
}

// deleteRecord removes the entry under key and takes it out of the indexes.
func deleteRecord(tx *bolt.Tx, key []byte) error {
	entries := tx.Bucket(bucketEntries)
	v := entries.Get(key)
	if v == nil {
		return nil
	}
	old, err := recordHead(v)
	if err != nil {
		return err
	}
	if err := entries.Delete(key); err != nil {
		return err
	}
	if err := tx.Bucket(bucketUnacked).Delete(key); err != nil {
		return err
	}
	return reindex(tx, key, old, head{})
}

// reindex moves the entry under key from old to now in both indexes.
func reindex(tx *bolt.Tx, key []byte, old, now head) error {
	if old.same(now) {
		return nil
	}
	final := tx.Bucket(bucketFinal)
	if old.State.final() {
		if err := final.Delete(finalKey(old.Updated, key)); err != nil {
			return err
		}
	}
	if now.State.final() {
		if err := final.Put(finalKey(now.Updated, key), nil); err != nil {
			return err
		}
	}
	if old.Printer == now.Printer && old.State == now.State {
		return nil
	}
	open := tx.Bucket(bucketOpen)
	switch {
	case indexed(now.State):
		if err := open.Put(bytes.Clone(key), []byte(now.State)); err != nil {
			return err
		}
	case indexed(old.State):
		if err := open.Delete(key); err != nil {
			return err
		}
	}
	counts := tx.Bucket(bucketCounts)
	if old.State != "" {
		if err := addCount(counts, old, -1); err != nil {
			return err
		}
	}
	if now.State != "" {
		return addCount(counts, now, 1)
	}
	return nil
}

func countKey(h head) []byte { return []byte(h.Printer + "\x00" + string(h.State)) }

// addCount adds d to h's printer's count of h's state; a count reaching zero is removed.
func addCount(counts *bolt.Bucket, h head, d int64) error {
	k := countKey(h)
	var n int64
	if v := counts.Get(k); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += d
	switch {
	case n < 0:
		return fmt.Errorf("outbox: the count of %s entries of printer %q would go below zero: the file's index is damaged", h.State, h.Printer)
	case n == 0:
		return counts.Delete(k)
	}
	return counts.Put(k, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// readCounts reads bucketCounts: printer -> state -> entries.
func readCounts(tx *bolt.Tx) (map[string]map[State]int, error) {
	out := map[string]map[State]int{}
	err := tx.Bucket(bucketCounts).ForEach(func(k, v []byte) error {
		printer, state, ok := strings.Cut(string(k), "\x00")
		if !ok || !State(state).valid() || len(v) != 8 {
			return fmt.Errorf("outbox: the file's count %q is damaged", k)
		}
		if out[printer] == nil {
			out[printer] = map[State]int{}
		}
		out[printer][State(state)] = int(binary.BigEndian.Uint64(v))
		return nil
	})
	return out, err
}

// buildIndexes makes both indexes from the entries, reading each one's printer and state
// alone: a file of an earlier format, opened by this version for the first time.
func buildIndexes(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketOpen, bucketCounts, bucketFinal} {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	open, final, counts := tx.Bucket(bucketOpen), tx.Bucket(bucketFinal), map[head]int64{}
	err := tx.Bucket(bucketEntries).ForEach(func(k, v []byte) error {
		h, err := recordHead(v)
		if err != nil {
			return fmt.Errorf("%w (sequence %d)", err, binary.BigEndian.Uint64(k))
		}
		if h.State.final() {
			if err := final.Put(finalKey(h.Updated, k), nil); err != nil {
				return err
			}
		}
		counts[head{Printer: h.Printer, State: h.State}]++
		if indexed(h.State) {
			return open.Put(bytes.Clone(k), []byte(h.State))
		}
		return nil
	})
	if err != nil {
		return err
	}
	cb := tx.Bucket(bucketCounts)
	for h, n := range counts {
		if err := cb.Put(countKey(h), binary.BigEndian.AppendUint64(nil, uint64(n))); err != nil {
			return err
		}
	}
	return nil
}

// buildUnacked makes bucketUnacked from the entries: every settled one, whose acknowledgement
// a file without the bucket cannot have kept.
func buildUnacked(tx *bolt.Tx) error {
	if tx.Bucket(bucketUnacked) != nil {
		if err := tx.DeleteBucket(bucketUnacked); err != nil {
			return err
		}
	}
	unacked, err := tx.CreateBucket(bucketUnacked)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketEntries).ForEach(func(k, v []byte) error {
		var h struct {
			State    State `json:"state"`
			Attempts int   `json:"attempts"`
		}
		if err := json.Unmarshal(v, &h); err != nil || !h.State.valid() {
			return fmt.Errorf("outbox: unreadable entry (sequence %d)", binary.BigEndian.Uint64(k))
		}
		if !h.State.settled() {
			return nil
		}
		return unacked.Put(bytes.Clone(k), ackMark(h.State, h.Attempts))
	})
}
