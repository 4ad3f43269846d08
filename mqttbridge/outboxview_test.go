package mqttbridge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// TestOutboxViewCountsKeptByChange: the view's counts, which it keeps as entries change rather
// than by walking the open ones, equal a walk of the open entries plus the settled counts after
// every step of a random history: entries of three printers enqueued, sent, retried, made
// unknown and settled, a change told twice, and changes of entries the view never saw open.
func TestOutboxViewCountsKeptByChange(t *testing.T) {
	v := &outboxView{open: map[string]map[string]openEntry{}, opened: map[string]map[outbox.State]int{}, settled: map[string]map[outbox.State]int{}, pub: map[string]*outboxPub{}}
	rng := rand.New(rand.NewPCG(1, 2))
	printers := []string{"line1", "line2", "line3"}
	states := []outbox.State{outbox.Pending, outbox.Sending, outbox.Unknown, outbox.Sent, outbox.Rejected, outbox.Expired, outbox.Cancelled}
	last := map[string]outbox.State{}
	for step := range 20000 {
		id := fmt.Sprintf("e%03d", rng.IntN(300))
		printer := printers[len(id)%len(printers)]
		if st, ok := last[id]; ok && final(st) {
			continue // a final state never changes
		}
		st := states[rng.IntN(len(states))]
		e := outbox.Entry{Intent: outbox.Intent{ID: id, Printer: printer}, State: st, Enqueued: time.Unix(int64(step), 0), Updated: time.Unix(int64(step), 0)}
		v.apply(e)
		if rng.IntN(10) == 0 {
			v.apply(e) // the same change told again
		}
		last[id] = st
		for _, p := range printers {
			want := map[outbox.State]int{}
			for _, s := range states {
				want[s] = v.settled[p][s]
			}
			for _, oe := range v.open[p] {
				want[oe.state]++
			}
			got := v.counts(p)
			for _, s := range states {
				if got[s] != want[s] {
					t.Fatalf("step %d (%s %s -> %s): %s counts %d %s, a walk %d", step, printer, id, st, p, got[s], s, want[s])
				}
			}
		}
	}
}

// TestOutboxViewSnapshotOldest: P/outbox lists the 50 longest-waiting pending and unknown
// entries, the longest first (ties by id), and counts the rest, as a sort of them all would;
// among 10,000 open entries it does so without a list of them all: 65 KB allocated per message
// (before: 1.6 MB, five messages a second under a flood).
func TestOutboxViewSnapshotOldest(t *testing.T) {
	v := &outboxView{open: map[string]map[string]openEntry{}, opened: map[string]map[outbox.State]int{}, settled: map[string]map[outbox.State]int{}, pub: map[string]*outboxPub{}}
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Unix(1_700_000_000, 0)
	want := map[outbox.State][]openEntry{}
	for i := range 10_000 {
		st := []outbox.State{outbox.Pending, outbox.Pending, outbox.Unknown, outbox.Sending}[rng.IntN(4)]
		// Few distinct times, so that many entries tie and the id decides.
		at := base.Add(time.Duration(rng.IntN(500)) * time.Second)
		e := outbox.Entry{Intent: outbox.Intent{ID: fmt.Sprintf("line1/e%05d", i), Printer: "line1"}, State: st, Enqueued: at, Updated: at, Attempts: i % 3}
		v.apply(e)
		want[st] = append(want[st], openEntry{id: callerID(e), state: st, since: at, attempts: e.Attempts})
	}
	now := base.Add(time.Hour)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	payload := v.snapshot("line1", now)
	runtime.ReadMemStats(&after)
	var got OutboxState
	if err := json.Unmarshal(payload, &got); err != nil {
		t.Fatal(err)
	}
	check := func(name string, list []OutboxEntry, more int, all []openEntry) {
		sort.Slice(all, func(i, j int) bool {
			if !all[i].since.Equal(all[j].since) {
				return all[i].since.Before(all[j].since)
			}
			return all[i].id < all[j].id
		})
		if len(list) != outboxListMax || more != len(all)-outboxListMax {
			t.Fatalf("%s: %d listed and %d more, want %d and %d", name, len(list), more, outboxListMax, len(all)-outboxListMax)
		}
		for i, e := range list {
			w := all[i]
			if e.ID != w.id || !e.Since.Equal(w.since) || e.Attempts != w.attempts || e.AgeSeconds != int64(now.Sub(w.since)/time.Second) {
				t.Fatalf("%s[%d] = %+v, want %+v", name, i, e, w)
			}
		}
	}
	check("pending", got.Pending, got.PendingMore, want[outbox.Pending])
	check("unknown", got.Unknown, got.UnknownMore, want[outbox.Unknown])
	t.Logf("a snapshot of 10,000 open entries allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("a snapshot of 10,000 open entries allocated %d bytes, want at most 256 KiB", n)
	}
}
