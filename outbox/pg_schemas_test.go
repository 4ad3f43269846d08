package outbox

import (
	"sync"
	"testing"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPostgresSchemasApart: a queue of the same name in two schemas of one database (two
// DSNs whose search_path differ) are two queues, down to what they hear: a WithStateChange on
// one hears nothing of the other's changes, and still hears its own.
func TestPostgresSchemasApart(t *testing.T) {
	dsnA, dsnB := pgtest.DSN(t), pgtest.DSN(t)
	var mu sync.Mutex
	var heard []Entry
	a := openPG(t, dsnA, "q", nil, WithStateChange(func(e Entry) {
		mu.Lock()
		heard = append(heard, e)
		mu.Unlock()
	}))
	b := openPG(t, dsnB, "q", nil)
	enqueue(t, a, Intent{ID: "x", Printer: "line1", Job: job("a's")})
	enqueue(t, b, Intent{ID: "x", Printer: "line1", Job: job("b's")})
	if err := b.Cancel("x"); err != nil {
		t.Fatal(err)
	}
	if err := a.Cancel("x"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	mu.Lock()
	defer mu.Unlock()
	var states []State
	for _, e := range heard {
		if e.Job.Description != "a's" {
			t.Errorf("A heard %s of %q, an entry of the other schema", e.State, e.Job.Description)
		}
		states = append(states, e.State)
	}
	if len(states) != 2 || states[0] != Pending || states[1] != Cancelled {
		t.Errorf("A heard %v of its own entry, want [pending cancelled]", states)
	}
}
