package outbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// indexesOf reads the file's indexes, and what a full scan of its entries says they should
// be: open (sequence number -> state of each pending, sending and unknown entry) and counts.
func indexesOf(t *testing.T, db *bolt.DB) (open, wantOpen map[uint64]State, counts, wantCounts map[string]map[State]int) {
	t.Helper()
	open, wantOpen, wantCounts = map[uint64]State{}, map[uint64]State{}, map[string]map[State]int{}
	err := db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketEntries).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			if r.State == Pending || r.State == Sending || r.State == Unknown {
				wantOpen[binary.BigEndian.Uint64(k)] = r.State
			}
			if wantCounts[r.Printer] == nil {
				wantCounts[r.Printer] = map[State]int{}
			}
			wantCounts[r.Printer][r.State]++
			return nil
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOpen).ForEach(func(k, v []byte) error {
			open[binary.BigEndian.Uint64(k)] = State(v)
			return nil
		}); err != nil {
			return err
		}
		var err error
		counts, err = readCounts(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return open, wantOpen, counts, wantCounts
}

// checkIndexes fails the test unless the file's indexes are what a full scan of its entries
// says, and List of the indexed states and Counts agree with them.
func checkIndexes(t *testing.T, s *boltStore, step string) {
	t.Helper()
	checkIndexesAcked(t, s, step, nil)
}

// checkIndexesAcked is checkIndexes, and checks that the unacknowledged entries are the
// settled ones acked does not hold (with acked nil: every settled one is, or was acknowledged
// in its current state), each with its current state and attempts.
func checkIndexesAcked(t *testing.T, s *boltStore, step string, acked map[uint64]bool) {
	t.Helper()
	open, wantOpen, counts, wantCounts := indexesOf(t, s.db)
	if !maps.Equal(open, wantOpen) {
		t.Fatalf("%s: the index of open entries holds %v; the entries say %v", step, open, wantOpen)
	}
	if !maps.EqualFunc(counts, wantCounts, maps.Equal) {
		t.Fatalf("%s: the counts are %v; the entries say %v", step, counts, wantCounts)
	}
	got, err := s.counts(context.Background())
	if err != nil || !maps.EqualFunc(got, wantCounts, maps.Equal) {
		t.Fatalf("%s: counts() = %v, %v; the entries say %v", step, got, err, wantCounts)
	}
	all, err := s.list(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	unacked := map[uint64]string{}
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUnacked).ForEach(func(k, v []byte) error {
			unacked[binary.BigEndian.Uint64(k)] = string(v)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	final, wantFinal := map[string]bool{}, map[string]bool{}
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFinal).ForEach(func(k, _ []byte) error {
			final[string(k)] = true
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.State.final() {
			wantFinal[string(finalKey(r.Updated, seqKey(r.Seq)))] = true
		}
	}
	if !maps.Equal(final, wantFinal) {
		t.Fatalf("%s: the index of final entries by time holds %d keys; the entries say %d", step, len(final), len(wantFinal))
	}
	bySeq := map[uint64]*record{}
	for _, r := range all {
		bySeq[r.Seq] = r
		_, in := unacked[r.Seq]
		if acked != nil && r.State.settled() && in == acked[r.Seq] {
			t.Fatalf("%s: %s (%s) is unacknowledged %v, acknowledged in its state %v", step, r.ID, r.State, in, acked[r.Seq])
		}
	}
	for seq, mark := range unacked {
		r := bySeq[seq]
		if r == nil || !r.State.settled() || mark != string(ackMark(r.State, r.Attempts)) {
			t.Fatalf("%s: unacknowledged %d (%s) is not a settled entry in that state: %+v", step, seq, mark, r)
		}
	}
	un, err := s.unacknowledged(context.Background())
	if err != nil || len(un) != len(unacked) {
		t.Fatalf("%s: unacknowledged() gives %d entries, %v; the index holds %d", step, len(un), err, len(unacked))
	}
	for _, states := range [][]State{{Pending}, {Unknown}, {Pending, Unknown}, {Pending, Sending, Unknown}} {
		want := slices.DeleteFunc(slices.Clone(all), func(r *record) bool { return !containsState(states, r.State) })
		got, err := s.list(context.Background(), states)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(a, b *record) bool { return a.Seq == b.Seq && a.State == b.State }) {
			t.Fatalf("%s: list(%v) through the index gives %d entries, a scan %d", step, states, len(got), len(want))
		}
	}
}

// TestIndexesRandomized drives the file store through random operations of every kind that
// writes an entry (add; change to any state; begin, which makes an entry Sending, and finish
// in any state; expire; prune; a reopen, which turns Sending entries Unknown; acknowledge, in
// the entry's state or one it left) and checks after each step that the indexes equal a full
// scan of the entries (the final ones by time too, which prune reads), and the unacknowledged
// entries are the settled ones not acknowledged since their last change.
func TestIndexesRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	path := filepath.Join(t.TempDir(), "random.outbox")
	now := time.Now().UTC().Round(0)
	open := func() *boltStore {
		s, _, _, err := openBolt(path, commitHook{committed: func(uint64, []*record) {}}, now)
		if err != nil {
			t.Fatal(err)
		}
		s.db.NoSync = true // a crash is not what this test is about; fsyncs would make it slow
		return s
	}
	s := open()
	defer func() { _ = s.close() }()
	ctx := context.Background()
	states := []State{Pending, Sending, Sent, Rejected, Unknown, Expired, Cancelled}
	printers := []string{"", "line1", "line2"}
	var ids []string
	acked := map[uint64]bool{} // settled entries acknowledged in their current state
	pick := func() (*record, bool) {
		if len(ids) == 0 {
			return nil, false
		}
		r, err := s.lookup(ctx, ids[rng.IntN(len(ids))])
		return r, err == nil
	}
	for step := range 400 {
		now = now.Add(time.Second)
		var what string
		touched := func(seq uint64) { delete(acked, seq) }
		switch op := rng.IntN(11); {
		case op == 10:
			r, ok := pick()
			if !ok || !r.State.settled() {
				continue
			}
			a := Ack{ID: r.ID, State: r.State, Attempts: r.Attempts}
			if rng.IntN(4) == 0 {
				a.Attempts++ // an ack of a state it has left: changes nothing
			} else {
				acked[r.Seq] = true
			}
			what = fmt.Sprintf("acknowledge %s %s/%d", r.ID, a.State, a.Attempts)
			if err := s.acknowledge(ctx, []Ack{a}); err != nil {
				t.Fatal(err)
			}
		case op < 4:
			id := fmt.Sprintf("e%d", len(ids))
			ids = append(ids, id)
			what = "add " + id
			if _, _, err := s.add(ctx, &record{ID: id, Printer: printers[rng.IntN(len(printers))], Job: []byte(`{"labelName":"L"}`),
				ExpireAfter: time.Hour, State: Pending, Enqueued: now, Updated: now}); err != nil {
				t.Fatal(err)
			}
		case op < 6:
			r, ok := pick()
			if !ok {
				continue
			}
			to := states[rng.IntN(len(states))]
			what = fmt.Sprintf("change %s %s -> %s", r.ID, r.State, to)
			touched(r.Seq)
			if _, err := s.change(ctx, r.ID, now, func(r *record) error { r.State = to; return nil }); err != nil {
				t.Fatal(err)
			}
		case op < 8:
			r, ok := pick()
			if !ok {
				continue
			}
			to := states[rng.IntN(len(states))]
			what = fmt.Sprintf("begin and finish %s %s -> sending -> %s", r.ID, r.State, to)
			touched(r.Seq)
			b, err := s.begin(ctx, &item{seq: r.Seq}, now, func(r *record) bool { r.State = Sending; r.Attempts++; return true })
			if err != nil {
				t.Fatal(err)
			}
			checkIndexesAcked(t, s, fmt.Sprintf("step %d: begin %s", step, r.ID), acked)
			if rng.IntN(3) > 0 { // else left Sending, for a reopen
				b.State = to
				if err := s.finish(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
		case op < 9:
			r, ok := pick()
			if !ok {
				continue
			}
			what = "expire " + r.ID
			if r.State == Pending {
				touched(r.Seq)
			}
			if _, err := s.expire(ctx, []*item{{seq: r.Seq}}, now, func(r *record) bool {
				if r.State != Pending {
					return false
				}
				r.State = Expired
				return true
			}); err != nil {
				t.Fatal(err)
			}
		default:
			if rng.IntN(2) == 0 {
				older := time.Duration(rng.IntN(60)) * time.Second
				what = fmt.Sprintf("prune older than %v", older)
				before, err := s.list(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				n, err := s.prune(ctx, now, older)
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				for _, r := range before {
					if r.State.final() && r.Updated.Before(now.Add(-older)) {
						want++
						if _, err := s.lookup(ctx, r.ID); !errors.Is(err, ErrPruned) {
							t.Fatalf("step %d: %s (%s at %v) not pruned: %v", step, r.ID, r.State, r.Updated, err)
						}
					}
				}
				if n != want {
					t.Fatalf("step %d: pruned %d, a scan says %d", step, n, want)
				}
			} else {
				what = "reopen"
				sending, err := s.list(ctx, []State{Sending})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range sending {
					touched(r.Seq)
				}
				if err := s.close(); err != nil {
					t.Fatal(err)
				}
				s = open()
			}
		}
		checkIndexesAcked(t, s, fmt.Sprintf("step %d: %s", step, what), acked)
	}
}

// TestOpenBuildsIndexes: a file written by the version before the indexes (testdata/v2.outbox:
// line1's entries sent, rejected, unknown, cancelled, expired and pending, line2's sent,
// pending, one left sending and one unknown, the single-printer path's sent and pending, and
// a pruned ID), and one of the first format, are brought up to this format on Open: the
// indexes are built from the entries, the entry left sending becomes unknown in them, and
// Counts and List of the open states answer from them, again after a reopen.
func TestOpenBuildsIndexes(t *testing.T) {
	path := copyFile(t, "testdata/v2.outbox")
	if f := fileFormat(t, path); f != formatV2 {
		t.Fatalf("testdata/v2.outbox has format %q", f)
	}
	for round := range 2 {
		ob, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkIndexes(t, ob.store.(*boltStore), fmt.Sprintf("open %d", round+1))
		counts, err := ob.Counts()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]map[State]int{
			"line1": {Sent: 1, Rejected: 1, Unknown: 1, Cancelled: 1, Expired: 1, Pending: 1},
			"line2": {Sent: 1, Pending: 1, Unknown: 2},
			"":      {Sent: 1, Pending: 1},
		}
		if !maps.EqualFunc(counts, want, maps.Equal) {
			t.Errorf("open %d: Counts() = %v, want %v", round+1, counts, want)
		}
		open, err := ob.List(Pending, Unknown)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range open {
			ids = append(ids, e.ID)
		}
		if w := []string{"v2-02-unknown", "v2-06-pending", "v2-08-pending", "v2-09-pending", "v2-10-sending", "v2-11-unknown"}; !slices.Equal(ids, w) {
			t.Errorf("open %d: List(pending, unknown) = %v, want %v", round+1, ids, w)
		}
		un, err := ob.Unacknowledged()
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 && len(un) != 9 {
			t.Errorf("open 1: %d entries unacknowledged, want the 9 settled ones", len(un))
		}
		if round == 1 && len(un) != 8 {
			t.Errorf("open 2: %d entries unacknowledged, want 8 after one was acknowledged", len(un))
		}
		if round == 0 {
			if err := ob.Acknowledge(Ack{ID: un[0].ID, State: un[0].State, Attempts: un[0].Attempts}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ob.Get("v2-pruned"); !errors.Is(err, ErrPruned) {
			t.Errorf("the pruned ID: %v", err)
		}
		if err := ob.Close(); err != nil {
			t.Fatal(err)
		}
		if f := fileFormat(t, path); f != formatVersion {
			t.Errorf("format after open %d: %q", round+1, f)
		}
	}

	v1 := copyFile(t, "testdata/v1.outbox")
	ob, err := Open(v1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	checkIndexes(t, ob.store.(*boltStore), "the first format")
}

// fileFormat reads the format mark of the outbox file at path.
func fileFormat(t *testing.T, path string) string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var f string
	_ = db.View(func(tx *bolt.Tx) error {
		f = string(tx.Bucket(bucketMeta).Get(keyFormat))
		return nil
	})
	return f
}
