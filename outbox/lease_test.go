package outbox

import (
	"testing"
	"time"
)

// TestLateRenewalActsOnNothing: a lane whose acquire or renewal came back after 4/5 of the TTL
// from its send time is held (the Run does not give it up) but not acted on: claim leaves its
// entries until a renewal comes back in time. A renewal that finds the lease gone ends it.
func TestLateRenewalActsOnNothing(t *testing.T) {
	const ttl = time.Second
	o := newOutbox(nil, options{})
	ll := &laneLeases{ttl: ttl}
	defer ll.leaveAll()
	o.mu.Lock()
	o.insert(&item{id: "x", seq: 1, printer: "line1", deadline: time.Now().Add(time.Hour), heapIdx: -1})
	o.mu.Unlock()

	if ll.renewed("line1", time.Now().Add(-900*time.Millisecond)) || ll.certain("line1") {
		t.Fatal("an acquire sent 0.9 TTL ago counted as a certain lease")
	}
	if ready, _ := o.claim(ll.certain); len(ready) != 0 {
		t.Fatalf("claimed %d entries of a lane whose acquire came back late", len(ready))
	}
	if !ll.renewed("line1", time.Now()) || !ll.certain("line1") {
		t.Fatal("a renewal that came back in time did not make the lease certain")
	}
	ready, _ := o.claim(ll.certain)
	if len(ready) != 1 {
		t.Fatalf("claimed %d entries after a renewal in time, want 1", len(ready))
	}
	l := ll.lease("line1")
	ll.keep(map[string]bool{}) // the next renewal does not find the lane
	if ll.certain("line1") || l.Err() == nil {
		t.Error("a lane the renewal did not find is still held")
	}
}
