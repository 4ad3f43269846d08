package outbox

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// TestIDConflict: an ID is one intent. Enqueue of a held ID for another printer or another
// kind is refused with ErrIDConflict and adds nothing; the same printer and kind return the
// entry held.
func TestIDConflict(t *testing.T) { eachStore(t, testIDConflict) }

func testIDConflict(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	held := enqueue(t, ob, Intent{ID: "o-1", Printer: "line1", Job: job("o-1")})
	enqueue(t, ob, Intent{ID: "t-1", Printer: "line1", Kind: KindTrigger})
	enqueue(t, ob, Intent{ID: "s-1", Job: job("s-1")})
	for _, c := range []struct {
		name string
		in   Intent
		msg  string
	}{
		{"another printer", Intent{ID: "o-1", Printer: "line2", Job: job("o-1")}, `it is a printJob for printer "line1" (pending), this is a printJob for printer "line2"`},
		{"the single-printer paths", Intent{ID: "o-1", Job: job("o-1")}, `this is a printJob for the single-printer paths`},
		{"a named printer for a single-printer entry", Intent{ID: "s-1", Printer: "line1", Job: job("s-1")}, `it is a printJob for the single-printer paths`},
		{"another kind", Intent{ID: "o-1", Printer: "line1", Kind: KindTrigger}, `this is a trigger for printer "line1"`},
		{"a deselect", Intent{ID: "o-1", Printer: "line1", Kind: KindDeselect}, `this is a deselect`},
		{"a trigger's id for a print job", Intent{ID: "t-1", Printer: "line1", Job: job("t-1")}, `it is a trigger for printer "line1"`},
	} {
		e, err := ob.Enqueue(context.Background(), c.in)
		if !errors.Is(err, ErrIDConflict) || !strings.Contains(err.Error(), c.msg) || e.ID != "" {
			t.Errorf("%s: %+v, %v; want ErrIDConflict saying %s", c.name, e, err, c.msg)
		}
		if errors.Is(err, ErrPruned) || errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v also matches ErrPruned or ErrNotFound", c.name, err)
		}
	}
	// The same printer and kind, even with another job: the entry held, unchanged.
	again := enqueue(t, ob, Intent{ID: "o-1", Printer: "line1", Job: job("other")})
	if again.Job.Description != "o-1" || !again.Enqueued.Equal(held.Enqueued) {
		t.Errorf("same printer and kind: %+v, want the entry held", again)
	}
	all, err := ob.List()
	if err != nil || len(all) != 3 {
		t.Fatalf("List: %d entries, %v; want the 3 enqueued first", len(all), err)
	}
}

// TestIDConflictConcurrent: Enqueues of one ID for two printers racing each other, batched
// into the same commits: one is added, every other call for its printer returns it, and
// every call for the other printer is refused.
func TestIDConflictConcurrent(t *testing.T) { eachStore(t, testIDConflictConcurrent) }

func testIDConflictConcurrent(t *testing.T, st testStore) {
	ob := st.open(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 32)
	got := make([]Entry, 32)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := []string{"line1", "line2"}[i%2]
			got[i], errs[i] = ob.Enqueue(context.Background(), Intent{ID: "race", Printer: p, Job: job(p)})
		}()
	}
	wg.Wait()
	e, err := ob.Get("race")
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		p := []string{"line1", "line2"}[i%2]
		switch {
		case p == e.Printer && (err != nil || got[i].Printer != p):
			t.Errorf("call %d for %s, the winner: %+v, %v", i, p, got[i], err)
		case p != e.Printer && !errors.Is(err, ErrIDConflict):
			t.Errorf("call %d for %s: %v, want ErrIDConflict", i, p, err)
		}
	}
	if all, _ := ob.List(); len(all) != 1 {
		t.Errorf("%d entries, want 1", len(all))
	}
}
