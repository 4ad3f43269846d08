package outbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// This file holds how committed changes reach the outbox's owner: the WithStateChange callback,
// in commit order, and Wait's wake-ups.

// WithStateChange has f called with an entry after every committed change of its state:
// Enqueue's Pending (not for a repeated ID, which changes nothing), Sending, and every outcome
// Run, Cancel, Resend and expiry commit, and also for each entry Open found Sending and turned
// Unknown, so the owner hears of those too.
//
// The calls come from one goroutine of the outbox, one at a time, in the order the changes
// were committed to the file, each after its commit. They begin when Run or Drain is first
// called (the changes committed before, Open's Unknown entries among them, wait for it), so f
// may use the *Outbox that Open returned; an outbox that never runs has them delivered by
// Close. Committing
// only hands a change to that goroutine, so a slow f never holds up delivery, Enqueue or Wait:
// the changes it has not taken yet wait in memory, as many as are committed meanwhile. Close
// returns once f has returned for every change committed before it; f must therefore return
// in the end and must not call Close. f may call the Outbox's other methods. On a queue in
// PostgreSQL the changes come by notification, and a change this Outbox committed whose
// notification does not come is read back and told within 2 s (OpenPostgres says more).
func WithStateChange(f func(Entry)) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: outbox.WithStateChange: callback is nil", labelprinter.ErrInvalidArgument)
		}
		o.onChange = f
		return nil
	}
}

// txChanges collects the records one write transaction changes, handed over when it commits.
type txChanges struct {
	id   uint64 // the transaction's ID; committed write transactions take consecutive IDs
	recs []*record
}

// notifier delivers committed changes to the callback in commit order. bbolt runs commit
// handlers after it has let go of the writer lock, so two transactions' handlers may run in
// either order; the consecutive IDs of committed write transactions put them back in order.
type notifier struct {
	fn func(Entry)

	mu      sync.Mutex
	next    uint64               // ID of the next transaction to queue
	early   map[uint64][]*record // committed ahead of an earlier one not yet handed over
	queue   []*record
	started bool
	stopped bool
	wake    chan struct{}
	done    chan struct{} // closed when the goroutine has delivered everything and returned
}

func newNotifier(fn func(Entry)) *notifier {
	return &notifier{fn: fn, early: map[uint64][]*record{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// committed queues the changes of transaction id, which has committed.
func (n *notifier) committed(id uint64, recs []*record) {
	n.mu.Lock()
	if id != n.next {
		n.early[id] = recs
		n.mu.Unlock()
		return
	}
	n.queue = append(n.queue, recs...)
	n.next++
	for {
		more, ok := n.early[n.next]
		if !ok {
			break
		}
		delete(n.early, n.next)
		n.queue = append(n.queue, more...)
		n.next++
	}
	n.mu.Unlock()
	n.poke()
}

func (n *notifier) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// start begins delivery; later calls do nothing.
func (n *notifier) start() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.started {
		n.started = true
		go n.loop()
	}
}

// stop delivers what is queued and returns when the callback has returned for all of it.
func (n *notifier) stop() {
	n.start()
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	n.poke()
	<-n.done
}

func (n *notifier) loop() {
	defer close(n.done)
	for {
		n.mu.Lock()
		batch := n.queue
		n.queue = nil
		stopped := n.stopped
		n.mu.Unlock()
		for _, r := range batch {
			n.fn(r.view())
		}
		if len(batch) > 0 {
			continue
		}
		if stopped {
			return
		}
		<-n.wake
	}
}

// hook is what the store calls on its commits: it counts the commit, hands the changes to the
// notifier and wakes the Waits of the entries they changed.
func (o *Outbox) hook() commitHook {
	return commitHook{
		first: func(id uint64) {
			if o.notify != nil {
				o.notify.next = id
			}
		},
		committed: func(id uint64, recs []*record) {
			o.commits.Add(1)
			if o.notify != nil {
				o.notify.committed(id, recs)
			}
			if len(recs) > 0 {
				o.wakeWaiters(recs)
			}
		},
	}
}

// wakeWaiters wakes the Waits of the entries in recs.
func (o *Outbox) wakeWaiters(recs []*record) {
	o.waitMu.Lock()
	defer o.waitMu.Unlock()
	for _, r := range recs {
		for _, c := range o.waiters[r.ID] {
			close(c)
		}
		delete(o.waiters, r.ID)
	}
}

// Wait returns the entry with id once it is in a state that changes no more without a person:
// Sent, Rejected, Expired, Cancelled or Unknown; at once if it already is. It does not read the
// file while it waits: the commits of Run, Cancel and Resend wake it. On a queue in PostgreSQL
// the notifications of every process's commits wake it, and it reads the entry at least every
// 2 s besides, so a notification that never comes delays it by 2 s at most. An ID the outbox does not
// hold is ErrNotFound; when ctx ends first, ctx's error; when the Outbox is closed meanwhile,
// an error saying so. Wait on an entry nothing delivers (no Run) lasts until ctx ends.
func (o *Outbox) Wait(ctx context.Context, id string) (Entry, error) {
	if ctx == nil {
		return Entry{}, invalid("Wait", "nil context")
	}
	for {
		if err := ctx.Err(); err != nil {
			return Entry{}, err
		}
		// Registering before reading leaves no gap in which a change could go unseen.
		c := make(chan struct{})
		o.waitMu.Lock()
		o.waiters[id] = append(o.waiters[id], c)
		o.waitMu.Unlock()
		e, err := o.Get(id)
		if err != nil || e.State.settled() {
			o.unwait(id, c)
			return e, err
		}
		if err := o.waitWake(ctx, id, c); err != nil {
			return Entry{}, err
		}
	}
}

// waitWake waits until c is closed (a commit changed entry id) or, on a queue in PostgreSQL,
// o.recheck has passed; ctx's error or errClosed when they end the wait first.
func (o *Outbox) waitWake(ctx context.Context, id string, c chan struct{}) error {
	var recheck <-chan time.Time
	if o.recheck > 0 {
		t := time.NewTimer(o.recheck)
		defer t.Stop()
		recheck = t.C
	}
	select {
	case <-c:
		return nil
	case <-recheck:
		o.unwait(id, c) // and read it again
		return nil
	case <-ctx.Done():
		o.unwait(id, c)
		return ctx.Err()
	case <-o.closing:
		o.unwait(id, c)
		return errClosed
	}
}

// wakeAllWaiters wakes every Wait, to read its entry again: changes may have gone unheard.
func (o *Outbox) wakeAllWaiters() {
	o.waitMu.Lock()
	defer o.waitMu.Unlock()
	for id, list := range o.waiters {
		for _, c := range list {
			close(c)
		}
		delete(o.waiters, id)
	}
}

// unwait removes c from the waiters of id, if a commit has not already woken it.
func (o *Outbox) unwait(id string, c chan struct{}) {
	o.waitMu.Lock()
	defer o.waitMu.Unlock()
	list := o.waiters[id]
	for i, x := range list {
		if x == c {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(o.waiters, id)
	} else {
		o.waiters[id] = list
	}
}
