// Package group runs calls that arrive while one is in flight as one batch: a call made while
// none is in flight runs at once, alone, and never waits for company; the calls made while a
// batch is in flight wait for it and then go together, in arrival order, as the next batch.
// A database whose round trips cost more than the rows they carry answers each batch in one.
package group

import (
	"context"
	"sync"
)

// Group gathers calls of values T into batches that its run function handles, one batch at a
// time. The zero Group is not usable: New makes one.
type Group[T any] struct {
	run func(batch []T)
	key func(T) string
	max int

	mu    sync.Mutex
	busy  bool // a batch is in flight
	queue []*call[T]
}

type call[T any] struct {
	v    T
	lead chan []*call[T] // the batch this call runs, when the one before hands it over
	done chan struct{}   // closed once run returned for the call's batch
	in   bool            // in a batch (set under mu): its outcome is run's
}

// New returns a Group whose batches run calls. key, when not nil, keeps calls of one key apart:
// a batch holds at most one call of each key, the others waiting for a batch of their own, in
// their order (two adds of one ID in one statement could not be told apart). max bounds a
// batch (0: no bound).
func New[T any](run func(batch []T), key func(T) string, max int) *Group[T] {
	return &Group[T]{run: run, key: key, max: max}
}

// Do has v run in a batch and returns nil once run has returned for that batch, or ctx's
// error when ctx ends first. With an error, sent says whether v was already in a batch by
// then: its outcome is then run's, which the caller does not wait for; otherwise v was taken
// out and never runs. run is called in the goroutine of one caller of the batch (or, when
// that caller's ctx ended while it was handed the batch, in a goroutine of its own that ends
// with run).
func (g *Group[T]) Do(ctx context.Context, v T) (sent bool, err error) {
	c := &call[T]{v: v, lead: make(chan []*call[T], 1), done: make(chan struct{})}
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		c.in = true
		g.mu.Unlock()
		g.runFrom([]*call[T]{c})
		return true, nil
	}
	g.queue = append(g.queue, c)
	g.mu.Unlock()
	select {
	case batch := <-c.lead:
		g.runFrom(batch)
		return true, nil
	case <-c.done:
		return true, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if !c.in {
		for i, q := range g.queue {
			if q == c {
				g.queue = append(g.queue[:i:i], g.queue[i+1:]...)
				break
			}
		}
		g.mu.Unlock()
		return false, ctx.Err()
	}
	g.mu.Unlock()
	select {
	case batch := <-c.lead:
		// The others of the batch wait for it: it runs without this caller.
		go g.runFrom(batch)
	default:
	}
	return true, ctx.Err()
}

// runFrom runs batch, answers its calls, and hands the next batch, if any call waits, to its
// first call; otherwise the group is idle again.
func (g *Group[T]) runFrom(batch []*call[T]) {
	vs := make([]T, len(batch))
	for i, c := range batch {
		vs[i] = c.v
	}
	g.run(vs)
	for _, c := range batch {
		close(c.done)
	}
	g.mu.Lock()
	next := g.take()
	if len(next) == 0 {
		g.busy = false
		g.mu.Unlock()
		return
	}
	// Handed over under mu: a caller whose ctx ends looks for it under mu (the channel has
	// room for it, so this never blocks).
	next[0].lead <- next
	g.mu.Unlock()
}

// take moves the next batch out of the queue, marking its calls as in it; g.mu is held.
func (g *Group[T]) take() []*call[T] {
	var batch, rest []*call[T]
	seen := map[string]bool{}
	for _, c := range g.queue {
		if g.max > 0 && len(batch) == g.max {
			rest = append(rest, c)
			continue
		}
		if g.key != nil {
			k := g.key(c.v)
			if seen[k] {
				rest = append(rest, c)
				continue
			}
			seen[k] = true
		}
		c.in = true
		batch = append(batch, c)
	}
	g.queue = rest
	return batch
}

// Waiting returns how many calls wait for a batch: those not in one yet.
func (g *Group[T]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
