package outbox

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// testStore opens outboxes of one store for a test whose behaviour every store shares.
type testStore struct {
	name string
	// open opens a new, empty outbox with a 10 ms retry interval, closed at cleanup.
	open func(t testing.TB, c *labelprinter.Client, opts ...Option) *Outbox
	// reopen closes ob and opens what it held again: the same file, or the same queue.
	reopen func(t testing.TB, ob *Outbox, c *labelprinter.Client, opts ...Option) *Outbox
	// age makes what ob holds d older, as if the store's clock had moved on.
	age func(t testing.TB, ob *Outbox, d time.Duration)
}

// eachStore runs f as a subtest for each store: the bbolt file, and a queue in PostgreSQL
// (skipped, or failed with LABELPRINTER_REQUIRE_POSTGRES=1, when there is none).
func eachStore(t *testing.T, f func(t *testing.T, st testStore)) {
	t.Run("bbolt", func(t *testing.T) {
		var mu sync.Mutex
		paths := map[*Outbox]string{}
		openPath := func(t testing.TB, path string, c *labelprinter.Client, opts ...Option) *Outbox {
			ob, err := Open(path, c, append([]Option{WithRetryInterval(10 * time.Millisecond)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ob.Close() })
			mu.Lock()
			paths[ob] = path
			mu.Unlock()
			return ob
		}
		f(t, testStore{
			name: "bbolt",
			open: func(t testing.TB, c *labelprinter.Client, opts ...Option) *Outbox {
				return openPath(t, filepath.Join(t.TempDir(), "test.outbox"), c, opts...)
			},
			reopen: func(t testing.TB, ob *Outbox, c *labelprinter.Client, opts ...Option) *Outbox {
				ob.Close()
				mu.Lock()
				path := paths[ob]
				mu.Unlock()
				return openPath(t, path, c, opts...)
			},
			age: func(t testing.TB, ob *Outbox, d time.Duration) {
				real := ob.now
				ob.now = func() time.Time { return real().Add(d) }
			},
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		var mu sync.Mutex
		queues := map[*Outbox]string{}
		n := 0
		openQueue := func(t testing.TB, q string, c *labelprinter.Client, opts ...Option) *Outbox {
			ob := openPG(t, dsn, q, c, opts...)
			mu.Lock()
			queues[ob] = q
			mu.Unlock()
			return ob
		}
		f(t, testStore{
			name: "postgres",
			open: func(t testing.TB, c *labelprinter.Client, opts ...Option) *Outbox {
				mu.Lock()
				n++
				q := fmt.Sprint("q", n)
				mu.Unlock()
				return openQueue(t, q, c, opts...)
			},
			reopen: func(t testing.TB, ob *Outbox, c *labelprinter.Client, opts ...Option) *Outbox {
				ob.Close()
				mu.Lock()
				q := queues[ob]
				mu.Unlock()
				return openQueue(t, q, c, opts...)
			},
			age: func(t testing.TB, _ *Outbox, d time.Duration) {
				sqlExec(t, dsn, `UPDATE labelprinter_outbox_entries SET enqueued = enqueued - $1 * interval '1 microsecond',
					updated = updated - $1 * interval '1 microsecond', pruned = pruned - $1 * interval '1 microsecond'`, d.Microseconds())
			},
		})
	})
}

// shared reports whether ob's store is shared, where commits are not counted as in a file.
func shared(ob *Outbox) bool {
	_, ok := ob.store.(sharedStore)
	return ok
}
