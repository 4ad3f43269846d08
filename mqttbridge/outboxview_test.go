package mqttbridge

import (
	"fmt"
	"math/rand/v2"
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
