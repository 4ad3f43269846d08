package outbox

import (
	"slices"
	"testing"
	"time"
)

// TestRecent: Recent returns the newest final entries by their last change, oldest first, and
// no pending one; after a reopen the same.
func TestRecent(t *testing.T) { eachStore(t, testRecent) }

func testRecent(t *testing.T, st testStore) {
	srv, _ := startSim(t, nil)
	c := newClient(t, srv.URL)
	ob := st.open(t, c)
	for _, id := range []string{"c0", "c1", "c2", "c3", "c4", "pending"} {
		enqueue(t, ob, Intent{ID: id, Printer: "line1", Job: job(id)})
	}
	// Cancelled in an order other than their enqueue order, each a little later.
	for _, id := range []string{"c4", "c1", "c3", "c0", "c2"} {
		if err := ob.Cancel(id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	check := func(ob *Outbox) {
		t.Helper()
		got, err := ob.Recent(3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), []string{"c3", "c0", "c2"}) {
			t.Errorf("Recent(3) = %v, want c3 c0 c2", ids(got))
		}
		all, err := ob.Recent(100)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(all), []string{"c4", "c1", "c3", "c0", "c2"}) {
			t.Errorf("Recent(100) = %v, want c4 c1 c3 c0 c2", ids(all))
		}
		if none, err := ob.Recent(0); err != nil || len(none) != 0 {
			t.Errorf("Recent(0) = %v, %v", ids(none), err)
		}
	}
	check(ob)
	check(st.reopen(t, ob, c))
}
