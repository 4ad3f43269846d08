package outbox

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/fence"
)

// settleGrace is how long a print job in flight may still take after Run's context ends or
// Close is called. Cutting it off sooner would turn a job that is arriving into an Unknown.
const settleGrace = 5 * time.Second

// item is a Pending entry in the in-memory index. The file is the truth; the index only saves
// Run from reading it to find the next job. It holds exactly the entries that are Pending or
// Sending in the file.
type item struct {
	id       string
	seq      uint64
	printer  string
	deadline time.Time // Enqueued + ExpireAfter
	failures int       // consecutive failures that left it Pending, for the backoff
	due      time.Time // not before this, after a failure
	busy     bool      // claimed: being sent, expired or cancelled
	heapIdx  int       // index in Outbox.expiry, -1 when not in it
	added    uint64    // Outbox.addedN when added indexed it; 0 otherwise
}

func newItem(r *record) *item {
	return &item{id: r.ID, seq: r.Seq, printer: r.Printer, deadline: r.Enqueued.Add(r.ExpireAfter), heapIdx: -1}
}

// lane is one printer's queue, in enqueue order; only its head may be sent.
type lane struct {
	items   []*item
	sending bool
}

// itemHeap orders items by deadline, so expiry finds the due ones without a scan.
type itemHeap []*item

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h itemHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *itemHeap) Push(x any) {
	it := x.(*item)
	it.heapIdx = len(*h)
	*h = append(*h, it)
}
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.heapIdx = -1
	return it
}

// insert adds it to the index: its lane, in sequence order, and the expiry heap. o.mu is held.
func (o *Outbox) insert(it *item) {
	if old := o.items[it.id]; old != nil {
		o.remove(old)
	}
	o.items[it.id] = it
	l := o.lanes[it.printer]
	if l == nil {
		l = &lane{}
		o.lanes[it.printer] = l
	}
	i := sort.Search(len(l.items), func(i int) bool { return l.items[i].seq > it.seq })
	l.items = append(l.items, nil)
	copy(l.items[i+1:], l.items[i:])
	l.items[i] = it
	heap.Push(&o.expiry, it)
}

// remove takes it out of the index. o.mu is held.
func (o *Outbox) remove(it *item) {
	if o.items[it.id] == it {
		delete(o.items, it.id)
	}
	if it.heapIdx >= 0 {
		heap.Remove(&o.expiry, it.heapIdx)
	}
	l := o.lanes[it.printer]
	if l == nil {
		return
	}
	for i, x := range l.items {
		if x == it {
			l.items = append(l.items[:i], l.items[i+1:]...)
			break
		}
	}
	if len(l.items) == 0 && !l.sending {
		delete(o.lanes, it.printer)
	}
}

// delivery is what a finished delivery reports to Run.
type delivery struct {
	it  *item
	err error // a failure of the file; the entry's own outcome is in the file
}

// Run delivers Pending entries until ctx ends or Close is called, then lets the requests in
// flight settle (up to 5 s, after which they are cut off and become Unknown) and returns nil.
// It wakes at once on Enqueue and Resend, and otherwise sleeps until the next retry or expiry
// is due. A failure to write the file stops it with that error. Only one Run (or Drain) of an
// Outbox may be active at a time, and it needs the Client given to Open.
//
// On a queue in PostgreSQL (OpenPostgres) Run delivers the printers whose lease it holds: it
// takes the lanes nobody holds (or whose holder's lease ran out) and renews its leases while
// it runs, and gives them up when it returns. A failure of the database does not stop it: it
// logs it (with WithLogger) and tries again, waiting 0.1 s, then twice as long each time, up to
// 5 s.
func (o *Outbox) Run(ctx context.Context) error { return o.run(ctx, "Run", false) }

// Drain is Run for a batch job: it delivers every entry that is due, one printer's entries
// one after the other as Run does, and returns nil once no request is in flight and no entry
// is due. An entry whose printer failed (no connection, 408, 429, 503) stays Pending, waiting
// out its retry interval, and holds back the later entries of its printer, which stay
// Pending too: the next Run or Drain sends them. Every entry Drain sends is settled (or
// Pending again) when it returns. ctx, Close and a failure of the file end it as they end Run,
// except that it returns ctx's error (or, after Close, an error) when it had not drained. On
// a queue in PostgreSQL it delivers the printers it can take; those another live Run holds
// are that Run's, and stay as they are. A failure of the database ends it with that error, as
// a failure of the file does, where Run waits it out.
func (o *Outbox) Drain(ctx context.Context) error { return o.run(ctx, "Drain", true) }

func (o *Outbox) run(ctx context.Context, op string, drain bool) error {
	if ctx == nil {
		return invalid(op, "nil context")
	}
	if o.client == nil {
		return invalid(op, "the outbox was opened without a Client")
	}
	o.mu.Lock()
	switch {
	case o.closeReq:
		o.mu.Unlock()
		return errClosed
	case o.running:
		o.mu.Unlock()
		return fmt.Errorf("outbox: %s: Run or Drain is already running", op)
	}
	o.running = true
	if o.notify != nil {
		o.notify.start() // the owner called Run with the Outbox in hand: the callback may use it
	}
	runDone := make(chan struct{})
	o.runDone = runDone
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.running = false
		o.runDone = nil
		o.mu.Unlock()
		close(runDone)
	}()

	// Jobs in flight outlive ctx for settleGrace: cancelling them the moment ctx ends would
	// make an Unknown of every job that was arriving when the program was asked to stop.
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	var grace *time.Timer
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()

	done := make(chan delivery)
	ctxDone, closing := ctx.Done(), o.closing
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var (
		inFlight int
		fatal    error
		stopping bool
		drained  bool
	)
	// A shared store's lanes: this Run delivers those it holds, looked at every poll and when
	// an entry was added elsewhere. A failure of the database is waited out, not fatal.
	shared, _ := o.store.(sharedStore)
	fenced, _ := o.store.(fencedStore)
	var certain func(printer string) bool // nil: every lane is this Outbox's (the file store)
	if fenced != nil {
		certain = func(p string) bool { return fenced.laneLease(p) != nil }
	}
	var (
		synced    bool      // the lanes were looked at once
		nextSync  time.Time // zero: at once
		lastSync  time.Time
		dbFails   int
		storeDown time.Time // no claims before this, after a failure of the database
	)
	if shared != nil {
		defer o.leaveLanes(shared)
	}
	o.stopping.Store(false)
	stop := func() {
		if !stopping {
			stopping = true
			o.stopping.Store(true)      // and no delivery goes on to the next entry of its lane
			ctxDone, closing = nil, nil // both stay ready; stop selecting them
			grace = time.AfterFunc(settleGrace, cancelReqs)
		}
	}
	storeFailed := func(err error) {
		if drain {
			// A batch job must end: Drain returns the database's failure, as it does the file's.
			if fatal == nil {
				fatal = err
			}
			stop()
			return
		}
		dbFails++
		storeDown = time.Now().Add(min(100*time.Millisecond<<min(dbFails-1, 6), 5*time.Second))
		nextSync = storeDown
		if o.log != nil {
			o.log.LogAttrs(context.Background(), slog.LevelWarn, "outbox: the database failed; retrying",
				slog.String("error", err.Error()), slog.Time("retry", storeDown))
		}
	}
	for {
		if ctx.Err() != nil {
			stop() // never start a delivery once ctx has ended
		}
		if shared != nil && !stopping {
			now := time.Now()
			if o.dirty.Load() && now.After(storeDown) {
				nextSync = minTime(nextSync, lastSync.Add(minSyncGap))
			}
			if !now.Before(nextSync) {
				o.dirty.Store(false)
				lastSync = now
				if uncertain, err := o.syncLanes(ctx, shared); err != nil {
					storeFailed(err)
				} else {
					dbFails, synced = 0, true
					nextSync = now.Add(shared.poll())
					if uncertain {
						// A lane's acquire or renewal came back too late to act on: renew at once.
						nextSync = now.Add(minSyncGap)
					}
				}
			}
		}
		if !stopping && (shared == nil || (synced && time.Now().After(storeDown))) {
			if err := o.expire(); err != nil {
				if shared != nil {
					storeFailed(err)
				} else {
					fatal = err
					stop()
				}
			}
		}
		var next time.Time
		if !stopping && (shared == nil || (synced && time.Now().After(storeDown))) {
			var ready []*item
			ready, next = o.claim(certain)
			for _, it := range ready {
				inFlight++
				go func(it *item) { done <- delivery{it: it, err: o.deliver(reqCtx, it)} }(it)
			}
			if drain && inFlight == 0 {
				drained = true // nothing due and nothing on its way
				stop()
			}
		}
		if shared != nil && !stopping {
			next = minTime(next, nextSync)
		}
		if stopping && inFlight == 0 {
			switch {
			case fatal != nil || !drain || drained:
				return fatal
			case ctx.Err() != nil:
				return ctx.Err()
			}
			return errClosed
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), time.Millisecond))
		}
		select {
		case <-ctxDone:
			stop()
		case <-closing:
			stop()
		case <-o.wake:
		case <-timer.C:
		case d := <-done:
			inFlight--
			switch {
			case d.err == nil:
			case shared != nil:
				storeFailed(d.err)
			case fatal == nil:
				fatal = d.err
				stop()
			}
		}
	}
}

// minSyncGap is the least time between two looks at a shared store's lanes that entries
// added elsewhere ask for.
const minSyncGap = 20 * time.Millisecond

// minTime is the earlier of a and b, a zero time counting as none.
func minTime(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// syncLanes looks at a shared store's lanes and brings the index up to date: it holds the
// Pending entries of the lanes this Outbox holds, and nothing else. uncertain says that a lane
// is held whose acquire or renewal came back too late to act on.
func (o *Outbox) syncLanes(ctx context.Context, s sharedStore) (uncertain bool, err error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	// A look the database does not answer must not hold up the end of Run, and Close with it:
	// the end of ctx or Close cuts it short (a lease it may have taken just runs out).
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	go func() {
		select {
		case <-o.closing:
			cancel()
		case <-sctx.Done():
		}
	}()
	o.mu.Lock()
	before := o.addedN // entries indexed after this may be newer than what sync reads
	o.mu.Unlock()
	st, err := s.sync(sctx, func(seq uint64) bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, it := range o.items {
			if it.seq == seq && it.busy {
				return true
			}
		}
		return false
	})
	if err != nil {
		return false, err
	}
	for _, r := range st.unknown {
		o.logState(r, true)
	}
	held := map[string]bool{}
	for _, p := range st.held {
		held[p] = true
	}
	keep := map[string]bool{}
	for _, r := range st.pending {
		keep[r.ID] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, it := range o.items {
		if !it.busy && (!held[it.printer] || !keep[id] && it.added <= before) {
			o.remove(it)
		}
	}
	for _, r := range st.pending {
		if o.items[r.ID] == nil {
			o.insert(newItem(r))
		}
	}
	return st.uncertain, nil
}

// releaseTimeout bounds giving up the lanes' leases at the end of a Run: it is best effort, as
// a lease not given up runs out on its own, and a database that does not answer must not hold
// up Close.
const releaseTimeout = 2 * time.Second

// leaveLanes ends a Run on a shared store: it gives up the leases, so that another Run may
// take the lanes at once. The index stays, with the back-off of the entries that failed: the
// next Run's first look at the lanes drops what is no longer this Outbox's.
func (o *Outbox) leaveLanes(s sharedStore) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := s.release(ctx); err != nil && o.log != nil {
		o.log.LogAttrs(ctx, slog.LevelWarn, "outbox: giving up the lanes' leases failed; they run out on their own",
			slog.String("error", err.Error()))
	}
}

// expire moves every Pending entry past its deadline to Expired, in one commit.
func (o *Outbox) expire() error {
	now := o.now()
	o.mu.Lock()
	var due, skipped []*item
	for len(o.expiry) > 0 && !o.expiry[0].deadline.After(now) {
		it := heap.Pop(&o.expiry).(*item)
		if it.busy {
			skipped = append(skipped, it)
			continue
		}
		it.busy = true
		due = append(due, it)
	}
	for _, it := range skipped {
		heap.Push(&o.expiry, it)
	}
	o.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	ctx, cancel := o.opContext()
	defer cancel()
	changed, err := o.store.expire(ctx, due, now.UTC().Round(0), expireRule)
	o.mu.Lock()
	for _, it := range due {
		if err == nil {
			o.remove(it)
		} else {
			it.busy = false
		}
	}
	o.mu.Unlock()
	if err != nil {
		return fmt.Errorf("outbox: recording expired entries: %w", err)
	}
	for _, r := range changed {
		o.logState(r, true)
	}
	return nil
}

// expireRule is what expiry makes of an entry past its deadline: Expired, if it is still
// Pending; it reports whether the entry changed.
func expireRule(r *record) bool {
	if r.State != Pending {
		return false
	}
	r.State = Expired
	r.Error = fmt.Sprintf("not sent within %v of being enqueued", r.ExpireAfter)
	return true
}

// beginRule is what sending makes of an entry before the request goes out: Sending, with one
// more attempt, if it is still Pending; it reports whether the entry changed.
func beginRule(r *record) bool {
	if r.State != Pending {
		return false
	}
	r.State = Sending
	r.Attempts++
	return true
}

// claim picks the head of every idle lane that is due, marks it busy, and returns them with
// the time the earliest waiting head or deadline falls due. With certain, only the lanes it
// reports held for certain now.
func (o *Outbox) claim(certain func(printer string) bool) (ready []*item, next time.Time) {
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	earliest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, l := range o.lanes {
		if l.sending || len(l.items) == 0 {
			continue
		}
		head := l.items[0]
		if head.busy {
			continue
		}
		if head.due.After(now) {
			earliest(head.due)
			continue
		}
		if certain != nil && !certain(head.printer) {
			continue // the next look at the lanes renews it, and wakes Run
		}
		head.busy = true
		l.sending = true
		if head.heapIdx >= 0 {
			heap.Remove(&o.expiry, head.heapIdx)
		}
		ready = append(ready, head)
	}
	if len(o.expiry) > 0 {
		earliest(o.expiry[0].deadline)
	}
	return ready, next
}

// deliver sends one claimed entry: it commits Sending (and the attempt), sends the printJob,
// and commits what the answer makes of it. On a store that claims the next entry of the lane
// with that outcome (chainStore) it goes on with that entry, and so on while the lane has one
// due. The returned error is a failure of the file only.
func (o *Outbox) deliver(ctx context.Context, it *item) error {
	rec, err := o.store.begin(ctx, it, o.now().UTC().Round(0), beginRule)
	skip := rec == nil
	if err != nil {
		o.release(it, nil)
		return fmt.Errorf("outbox: recording %q as sending: %w", it.id, err)
	}
	if skip {
		o.dirty.Store(true) // a shared store: the lane was lost, or another entry comes first
		gone := Cancelled   // the file no longer has it Pending: it leaves the index
		o.release(it, &gone)
		return nil
	}
	for {
		o.logState(rec, false)
		it, rec, err = o.deliverClaimed(ctx, it, rec)
		if err != nil || it == nil {
			return err
		}
	}
}

// deliverClaimed sends rec, the entry of it committed Sending, and commits its outcome; it
// returns the lane's next entry and its record when it was claimed with that outcome.
func (o *Outbox) deliverClaimed(ctx context.Context, it *item, rec *record) (*item, *record, error) {
	var (
		state      State
		errText    string
		answer     json.RawMessage
		retryAfter time.Duration
		resp       json.RawMessage
		perr       error
		cut        bool               // the lane's lease stopped the request before it was written
		written    = fence.WasWritten // how far the request got, when the lane has a lease
	)
	if fs, ok := o.store.(fencedStore); ok {
		resp, written, perr = o.sendLeased(ctx, fs, rec)
		cut = errors.Is(perr, errCut)
	} else {
		resp, perr = o.send(ctx, rec)
	}
	if cut {
		state, errText = Pending, notWrittenText
	} else {
		state, retryAfter = classify(perr)
		if perr != nil {
			errText = errorText(perr)
		}
	}
	if state == Sent && len(resp) > 0 {
		answer = resp
	}

	final := *rec
	final.State, final.Error, final.Response = state, errText, answer
	final.Updated = o.now().UTC().Round(0)
	var (
		next     *item
		nextRec  *record
		claimErr error
		err      error
	)
	if cs, ok := o.store.(chainStore); ok && state.final() {
		next = o.successor(it)
		if next != nil {
			nextRec, claimErr, err = cs.finishBegin(ctx, &final, next, beginRule)
		}
	}
	if next == nil {
		err = o.store.finish(ctx, &final)
	}
	if cut && err != nil && !errors.Is(err, errLateOutcome) {
		err = o.finishCut(ctx, &final, err)
	}
	if err != nil && next != nil {
		o.release(next, nil)
	}
	if errors.Is(err, errLateOutcome) {
		o.lateOutcome(it, &final, written)
		return nil, nil, nil
	}
	if err != nil {
		// The file still says Sending, so a restart makes it Unknown; it must not be sent again.
		o.release(it, &state)
		return nil, nil, fmt.Errorf("outbox: recording the outcome of %q (%s): %w", it.id, state, err)
	}
	if state == Pending && !cut { // a cut request waits for its lane's lease, not for the printer
		o.mu.Lock()
		it.failures++
		it.due = o.now().Add(o.backoff(it.failures, retryAfter))
		o.mu.Unlock()
	}
	if nextRec != nil {
		o.handOver(it, next)
	} else {
		o.release(it, &state)
	}
	o.logState(&final, true)
	if next != nil && nextRec == nil {
		o.dirty.Store(true) // the lane was not renewed, or another entry comes first
		o.release(next, nil)
		if claimErr != nil {
			return nil, nil, fmt.Errorf("outbox: recording %q as sending: %w", next.id, claimErr)
		}
		return nil, nil, nil
	}
	return next, nextRec, nil
}

// send makes the request rec's kind asks for.
func (o *Outbox) send(ctx context.Context, rec *record) (json.RawMessage, error) {
	switch rec.kind() {
	case KindDeselect:
		return o.client.Printers.DeselectJobs(ctx, rec.Printer)
	case KindTrigger:
		return o.client.Printers.Trigger(ctx, rec.Printer)
	}
	job, err := decodeJob(rec.Job)
	if err != nil {
		// Nothing was sent; the stored job can never be sent either (classify: Rejected).
		return nil, fmt.Errorf("%w: %w", labelprinter.ErrInvalidArgument, err)
	}
	return o.client.Printers.PrintJob(ctx, rec.Printer, &job)
}

// errorText is err as the entry keeps it. A connection the SDK tried several times to make
// reads "connection refused (after 4 attempts)"; the entry's Attempts counts requests, and a
// second count in its error would only confuse, so the SDK's is left out there.
func errorText(err error) string {
	var te *labelprinter.TransportError
	if errors.As(err, &te) && te == err && te.Attempts > 1 {
		once := *te
		once.Attempts = 1
		return once.Error()
	}
	return err.Error()
}

// release ends a claim: the item stays at the head of its lane when it is still Pending (or
// nothing was committed), and leaves the index otherwise.
func (o *Outbox) release(it *item, state *State) {
	o.mu.Lock()
	defer o.mu.Unlock()
	it.busy = false
	if l := o.lanes[it.printer]; l != nil {
		l.sending = false
	}
	if state == nil || *state == Pending {
		if it.heapIdx < 0 && o.items[it.id] == it {
			heap.Push(&o.expiry, it)
		}
	} else {
		o.remove(it)
	}
	// Wake Run without blocking: it may be busy starting other lanes.
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// backoff is the wait before the next attempt after the n-th consecutive failure: the retry
// interval doubled n-1 times, capped at a minute (or the interval itself, when longer); a
// longer Retry-After from the printer is honoured up to the same cap.
func (o *Outbox) backoff(n int, retryAfter time.Duration) time.Duration {
	limit := max(maxRetryInterval, o.retry)
	d := o.retry
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = max(d, min(retryAfter, limit))
	return min(d, limit)
}

// classify maps the SDK's answer to a printJob onto the entry's next state, following the
// SDK's own account of what may have reached the printer (errors.go):
//   - no error: the printer answered 2xx;
//   - an *APIError: the printer answered. 408, 429 and 503 say "not now" (408: the request
//     was not processed and may be repeated); any other 4xx says the request is wrong; any
//     other status (5xx, an unexpected 1xx or 3xx) leaves the outcome open, whether or not the
//     error also matches ErrOutcomeUnknown;
//   - ErrOutcomeUnknown (a *TransportError with MaybeSent): the request may have arrived;
//   - a *DecodeError of a 2xx answer: the printer took the job, its answer was unreadable;
//   - a *RedirectError: the printer or a proxy answered with a redirect; open;
//   - ErrInvalidArgument: refused before sending; it cannot succeed later;
//   - anything else the SDK returns for printJob (a *TransportError without MaybeSent, a
//     context error before the request was written) means nothing left this machine.
func classify(err error) (State, time.Duration) {
	if err == nil {
		return Sent, 0
	}
	var (
		apiErr   *labelprinter.APIError
		decErr   *labelprinter.DecodeError
		redirErr *labelprinter.RedirectError
	)
	switch {
	case errors.As(err, &apiErr):
		switch {
		case apiErr.StatusCode == http.StatusRequestTimeout || apiErr.StatusCode == http.StatusTooManyRequests ||
			apiErr.StatusCode == http.StatusServiceUnavailable:
			return Pending, apiErr.RetryAfter
		case apiErr.StatusCode >= 400 && apiErr.StatusCode <= 499:
			return Rejected, 0
		}
		return Unknown, 0
	case errors.Is(err, labelprinter.ErrOutcomeUnknown):
		return Unknown, 0
	case errors.As(err, &decErr):
		if decErr.StatusCode >= 200 && decErr.StatusCode <= 299 {
			return Sent, 0
		}
		return Unknown, 0
	case errors.As(err, &redirErr):
		return Unknown, 0
	case errors.Is(err, labelprinter.ErrInvalidArgument):
		return Rejected, 0
	}
	return Pending, 0
}

// logState logs a change of state, when a logger was given; withErr adds the entry's error.
func (o *Outbox) logState(r *record, withErr bool) {
	if o.log == nil || r == nil {
		return
	}
	level := slog.LevelInfo
	switch r.State {
	case Sending:
		level = slog.LevelDebug
	case Unknown:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("id", r.ID), slog.String("printer", r.Printer),
		slog.String("state", string(r.State)), slog.Int("attempts", r.Attempts),
	}
	if withErr && r.Error != "" {
		attrs = append(attrs, slog.String("error", r.Error))
	}
	o.log.LogAttrs(context.Background(), level, "outbox: "+string(r.State), attrs...)
}
