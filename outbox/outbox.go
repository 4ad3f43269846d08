package outbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
)

// State is where an entry is on its way to the printer.
type State string

// The states of an entry. Sent, Rejected, Expired and Cancelled are final.
const (
	Pending   State = "pending"   // waiting to be sent
	Sending   State = "sending"   // committed as being sent; becomes Unknown if the process dies here
	Sent      State = "sent"      // the printer answered 2xx
	Rejected  State = "rejected"  // the printer answered 4xx (not 408 or 429): sending again cannot help
	Unknown   State = "unknown"   // it may or may not have reached the printer; a person decides
	Expired   State = "expired"   // not sent before its ExpireAfter
	Cancelled State = "cancelled" // cancelled before it was sent, or dropped after Unknown
)

func (s State) valid() bool {
	switch s {
	case Pending, Sending, Sent, Rejected, Unknown, Expired, Cancelled:
		return true
	}
	return false
}

// final reports whether s is one of the states Prune may remove.
func (s State) final() bool {
	return s == Sent || s == Rejected || s == Expired || s == Cancelled
}

// settled reports whether s changes no more without a person: the states Wait returns on.
func (s State) settled() bool { return s.final() || s == Unknown }

// Kind is what an entry asks of its printer when it is due. Entries of every kind share their
// printer's queue: one at a time, in enqueue order.
type Kind uint8

// The kinds of intent. The zero value is KindPrintJob, so an Intent that names no Kind sends
// its Job, as before kinds existed.
const (
	// KindPrintJob selects Intent.Job on the printer, as Printers.PrintJob does. The Job must
	// not be empty: an empty printJob body deselects every job, which needs KindDeselect.
	KindPrintJob Kind = iota
	// KindDeselect deselects every job on the printer with an empty printJob body, as
	// Printers.DeselectJobs does. Its Job must be empty.
	KindDeselect
	// KindTrigger triggers one print, as Printers.Trigger does. Its Job must be empty, and it
	// needs a named Printer: the contract has no single-printer trigger.
	KindTrigger
)

// String names the kind as the file and labelctl do: "printJob", "deselect" or "trigger".
func (k Kind) String() string {
	switch k {
	case KindPrintJob:
		return "printJob"
	case KindDeselect:
		return "deselect"
	case KindTrigger:
		return "trigger"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// parseKind reads a kind as the file stores it; "" is KindPrintJob, as in files written before
// kinds existed.
func parseKind(s string) (Kind, bool) {
	switch s {
	case "", "printJob":
		return KindPrintJob, true
	case "deselect":
		return KindDeselect, true
	case "trigger":
		return KindTrigger, true
	}
	return 0, false
}

// Intent is one order for a printer as the caller hands it over.
type Intent struct {
	ID          string                // the caller's key (an order line, a pallet); "" generates one
	Printer     string                // "" = the single-printer path (not for KindTrigger)
	Job         labelprinter.PrintJob // validated at Enqueue; empty unless Kind is KindPrintJob
	ExpireAfter time.Duration         // default 24h
	Kind        Kind                  // what is sent; the zero value sends Job
}

// Entry is an intent with its delivery record, as Get and List return it. Job.Extra values
// come back as json.RawMessage, which encode to the same bytes that were enqueued.
type Entry struct {
	Intent
	State    State           // where it is now
	Attempts int             // requests sent for it (printJob or trigger), each committed before it went out
	Enqueued time.Time       // when Enqueue committed it; ExpireAfter counts from here
	Updated  time.Time       // its last change of state; Prune counts from here
	Error    string          // the last error, if any (without the SDK's own count of dials: Attempts is the count)
	Response json.RawMessage // the printer's answer, once Sent (nil when its body was empty)
}

// Errors of the outbox. Match them with errors.Is; the returned errors add the entry or file.
var (
	// ErrNotFound is returned for an ID the outbox does not hold.
	ErrNotFound = errors.New("outbox: no such entry")
	// ErrWrongState is returned by Cancel and Resend for an entry whose state does not allow
	// the change; nothing is changed.
	ErrWrongState = errors.New("outbox: the entry's state does not allow this")
	// ErrPruned is returned by Enqueue for the ID of an entry that Prune removed: it was
	// settled once and is not taken again. Get of such an ID matches it too, beside
	// ErrNotFound.
	ErrPruned = errors.New("outbox: the ID belongs to a pruned entry")
	// ErrLocked is returned by Open when another Outbox, in this process or another, has the
	// file open.
	ErrLocked = errors.New("outbox: the file is in use by another outbox")
)

// errClosed is returned by every method called after Close.
var errClosed = errors.New("outbox: closed")

const (
	defaultExpireAfter   = 24 * time.Hour
	defaultRetryInterval = time.Second
	maxRetryInterval     = time.Minute
	// lockTimeout bounds how long Open waits for the file lock before ErrLocked.
	lockTimeout = 500 * time.Millisecond
	// opTimeout bounds the operations whose methods take no context (Get, List, Cancel,
	// Resend, Prune, ForgetIDs) on a store over the network.
	opTimeout = 30 * time.Second
	// maxIDLen bounds an intent's ID, which is a key in the file and a column in listings.
	maxIDLen = 256
	// formatVersion marks a file as an outbox of this layout: entries of every kind, the IDs
	// of pruned entries and the indexes of boltindex.go. formatV2 (without the indexes) and
	// formatV1 (without kinds and pruned IDs either) are read and brought up to it; a version
	// that knows only those refuses a file of this one, whose indexes it would not keep.
	formatVersion = "go-labelprinter outbox 3"
	formatV2      = "go-labelprinter outbox 2"
	formatV1      = "go-labelprinter outbox 1"
	// batchDelay and batchSize tune bbolt's group commit of concurrent writes (see write): a
	// batch commits as soon as 16 writes have joined it, or 0.5 ms after the first one did.
	batchDelay = 500 * time.Microsecond
	batchSize  = 16
)

var (
	bucketMeta    = []byte("outbox")
	bucketEntries = []byte("entries") // sequence number -> record
	bucketIDs     = []byte("ids")     // ID -> sequence number
	bucketPruned  = []byte("pruned")  // ID of a pruned entry -> its tombstone
	keyFormat     = []byte("format")
)

// Option configures an Outbox in Open. Every option validates its argument, and Open returns
// the first error.
type Option func(*options) error

type options struct {
	clock    func() time.Time // the host's clock, for a test of clocks that differ
	leaseTTL time.Duration
	retry    time.Duration
	logger   *slog.Logger
	onChange func(Entry)
	// Of a queue in PostgreSQL: the listen DSN, and how long OpenPostgres waits for its own
	// notification (0: pgProbeWait; negative: it does not check, for tests of a listener
	// that hears nothing).
	listenDSN string
	probeWait time.Duration
	listener  *PostgresListener // WithListener's, or nil
	tracer    pgx.QueryTracer   // sees the statements of the store's pools (not the listener's), for tests that count them
}

// WithRetryInterval sets the first wait before resending a Pending entry after a failure
// (default 1s); each further failure of the same entry doubles it, up to 1 min (or d, if d
// is longer). A Retry-After from the printer's 408, 429 or 503 is honoured up to that cap.
func WithRetryInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: outbox.WithRetryInterval: interval must be positive, got %v", labelprinter.ErrInvalidArgument, d)
		}
		o.retry = d
		return nil
	}
}

// WithLogger logs every change of an entry's state to l: Sending at debug level, Sent, Pending
// after a failure, Expired and the others at info, Unknown at warn; on a queue in PostgreSQL
// also a warning, at most once a minute, when changes this Outbox committed had to be read
// back because no notification brought them. Nothing is logged without it.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("%w: outbox.WithLogger: logger is nil", labelprinter.ErrInvalidArgument)
		}
		o.logger = l
		return nil
	}
}

// Outbox is a durable queue of print intents in one file (Open) or one queue of a PostgreSQL
// database (OpenPostgres). It is safe for concurrent use; one Run delivers while any number of
// goroutines Enqueue, Get, List, Cancel and Resend.
type Outbox struct {
	store  store
	client *labelprinter.Client
	retry  time.Duration
	log    *slog.Logger
	now    func() time.Time

	commits atomic.Int64
	notify  *notifier // nil without WithStateChange
	// recheck is how often a Wait reads its entry while nothing wakes it; 0: never, for the
	// file, whose commits always do.
	recheck time.Duration
	// dirty says a shared store's lanes need a look before the next claim: an entry was
	// added or resent elsewhere.
	dirty atomic.Bool
	// addedN counts the entries of a shared store indexed by added (under mu): a look at the
	// lanes that began before one was indexed does not drop it.
	addedN uint64

	waitMu  sync.Mutex
	waiters map[string][]chan struct{} // closed by the commit that changes the entry

	// gate is held shared by Enqueue and the readers and exclusively by Cancel, Resend and
	// Close, so that every Pending entry in the file is also in the index when they look.
	gate   sync.RWMutex
	closed bool // under gate

	mu       sync.Mutex // guards the index below
	items    map[string]*item
	lanes    map[string]*lane
	expiry   itemHeap
	running  bool
	stopping atomic.Bool // the Run is ending: no delivery starts, nor goes on to the next entry
	closeReq bool        // Close was called
	wake     chan struct{}
	closing  chan struct{}
	runDone  chan struct{} // closed when the current Run returns; nil when none runs
}

// Open opens the outbox file at path, creating it if it does not exist. c delivers the
// intents; it may be nil for an outbox that is only inspected or filled (everything but Run).
// Entries left in Sending by a process that died are turned to Unknown. A file that another
// Outbox has open gives ErrLocked within a second; a file that is not an outbox is an error
// that says so, and the file is left as it was.
func Open(path string, c *labelprinter.Client, opts ...Option) (*Outbox, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: outbox.Open: empty path", labelprinter.ErrInvalidArgument)
	}
	o, err := parseOptions("Open", opts)
	if err != nil {
		return nil, err
	}
	ob := newOutbox(c, o)
	st, unknown, pending, err := openBolt(path, ob.hook(), ob.now().UTC())
	if err != nil {
		return nil, err
	}
	ob.store = st
	for _, r := range pending {
		ob.insert(newItem(r))
	}
	for _, r := range unknown {
		ob.logState(r, true)
	}
	return ob, nil
}

// newOutbox returns an Outbox without its store.
func newOutbox(c *labelprinter.Client, o options) *Outbox {
	ob := &Outbox{
		client:  c,
		retry:   o.retry,
		log:     o.logger,
		now:     time.Now,
		items:   map[string]*item{},
		lanes:   map[string]*lane{},
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		waiters: map[string][]chan struct{}{},
	}
	if o.onChange != nil {
		ob.notify = newNotifier(o.onChange)
	}
	return ob
}

// parseOptions applies opts for op.
func parseOptions(op string, opts []Option) (options, error) {
	o := options{retry: defaultRetryInterval}
	for _, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("%w: outbox.%s: nil option", labelprinter.ErrInvalidArgument, op)
		}
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Enqueue stores in as a Pending entry and returns it once it is committed and fsynced. An
// ID already in the outbox for the same printer and kind returns the existing entry, whatever
// its state, and adds nothing; for another printer or kind it adds nothing and returns an
// error matching ErrIDConflict; the ID of an entry Prune removed adds nothing either and returns an error matching
// ErrPruned (until ForgetIDs lets go of it).
// The intent is checked first and a bad one wraps labelprinter.ErrInvalidArgument: the job (a
// KindPrintJob needs a job the SDK would send, the other kinds an empty one), the printer
// name (KindTrigger needs one), the ID and ExpireAfter. ctx is checked before the write, which
// is not interrupted.
func (o *Outbox) Enqueue(ctx context.Context, in Intent) (Entry, error) {
	if ctx == nil {
		return Entry{}, invalid("Enqueue", "nil context")
	}
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	if in.ID == "" {
		in.ID = rand.Text()
	} else if err := checkText("ID", in.ID); err != nil {
		return Entry{}, err
	}
	if in.Printer != "" {
		if err := checkPrinter(in.Printer); err != nil {
			return Entry{}, err
		}
	}
	switch {
	case in.ExpireAfter < 0:
		return Entry{}, invalid("Enqueue", "ExpireAfter is negative (%v)", in.ExpireAfter)
	case in.ExpireAfter == 0:
		in.ExpireAfter = defaultExpireAfter
	}
	body, err := checkJob(in)
	if err != nil {
		return Entry{}, err
	}

	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return Entry{}, errClosed
	}
	now := o.now().UTC().Round(0)
	stored, created, err := o.store.add(ctx, &record{ID: in.ID, Printer: in.Printer, Kind: kindName(in.Kind), Job: body,
		ExpireAfter: in.ExpireAfter, State: Pending, Enqueued: now, Updated: now})
	if errors.Is(err, ErrPruned) {
		return Entry{}, prunedEnqueue(in.ID, err)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("outbox: enqueue %q: %w", in.ID, err)
	}
	if !created {
		// The ID is held: the caller's key for one intent (idconflict.go).
		if err := checkHeld(stored, in); err != nil {
			return Entry{}, err
		}
	}
	if created {
		o.added(stored)
	}
	return stored.entry()
}

// added indexes a new Pending entry and wakes Run. An entry in a shared store is indexed at
// once when its lane is this Outbox's for certain (the claim checks again, in the database,
// that the lease holds and that the entry is the lane's head); any other waits for the next
// look at the lanes, which knows whether its lane is this Outbox's. Looking at the lanes for
// every entry added would hold up the Run, which looks in between deliveries, on the
// database's round trips.
func (o *Outbox) added(r *record) {
	if _, ok := o.store.(sharedStore); ok {
		if f, ok := o.store.(fencedStore); !ok || f.laneLease(r.Printer) == nil {
			o.dirty.Store(true)
			o.signal()
			return
		}
	}
	o.mu.Lock()
	if o.items[r.ID] == nil {
		it := newItem(r)
		o.addedN++
		it.added = o.addedN
		o.insert(it)
	}
	o.mu.Unlock()
	o.signal()
}

// indexed reports whether the entry id is in the index: Pending, in a lane this Outbox
// delivers.
func (o *Outbox) indexed(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.items[id] != nil
}

// lookup reads the record of id.
func (o *Outbox) lookup(id string) (*record, error) {
	ctx, cancel := o.opContext()
	defer cancel()
	return o.store.lookup(ctx, id)
}

// opContext bounds an operation whose method takes no context: a store on a network answers
// within opTimeout or fails.
func (o *Outbox) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// Get returns the entry with id, or an error matching ErrNotFound; for the ID of a pruned
// entry the error also matches ErrPruned and says what became of it.
func (o *Outbox) Get(id string) (Entry, error) {
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return Entry{}, errClosed
	}
	r, err := o.lookup(id)
	if err != nil {
		return Entry{}, err
	}
	return r.entry()
}

// GetEach returns what Get returns for each of ids, in their order: entries[i] and errs[i]
// are Get(ids[i])'s. On a queue in PostgreSQL the entries are read in one statement, so one
// round trip, instead of one per ID; the file store reads them one after the other.
func (o *Outbox) GetEach(ids ...string) (entries []Entry, errs []error) {
	entries, errs = make([]Entry, len(ids)), make([]error, len(ids))
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		for i := range errs {
			errs[i] = errClosed
		}
		return entries, errs
	}
	ctx, cancel := o.opContext()
	defer cancel()
	var recs []*record
	if m, ok := o.store.(multiLookupStore); ok {
		recs, errs = m.lookupEach(ctx, ids)
	} else {
		recs = make([]*record, len(ids))
		for i, id := range ids {
			recs[i], errs[i] = o.store.lookup(ctx, id)
		}
	}
	for i, r := range recs {
		if errs[i] == nil {
			entries[i], errs[i] = r.entry()
		}
	}
	return entries, errs
}

// List returns the entries in the given states, in enqueue order; with no states, all of them.
// Listing pending, sending and unknown entries alone reads those entries only: a file and a
// queue in PostgreSQL keep an index of them.
func (o *Outbox) List(states ...State) ([]Entry, error) {
	for _, s := range states {
		if !s.valid() {
			return nil, invalid("List", "unknown state %q", s)
		}
	}
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return nil, errClosed
	}
	ctx, cancel := o.opContext()
	defer cancel()
	recs, err := o.store.list(ctx, states)
	if err != nil {
		return nil, err
	}
	return toEntries(recs)
}

// toEntries returns the records as entries, in their order.
func toEntries(recs []*record) ([]Entry, error) {
	out := make([]Entry, 0, len(recs))
	for _, r := range recs {
		e, err := r.entry()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Counts returns how many entries each printer has in each state: printer (""  for the
// single-printer path) -> state -> entries; a state with none is absent. A file keeps these
// counts with every change, so Counts reads no entry, however long its history; a queue in
// PostgreSQL counts its pending, sending and unknown entries through their index and keeps
// the counts of the final ones in a table of their own, so Counts reads no final entry
// either.
func (o *Outbox) Counts() (map[string]map[State]int, error) {
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return nil, errClosed
	}
	ctx, cancel := o.opContext()
	defer cancel()
	return o.store.counts(ctx)
}

// Ack names a settled entry's state as its caller told of it: its ID, state and attempts.
type Ack struct {
	ID       string
	State    State
	Attempts int
}

// Unacknowledged returns the settled entries (sent, rejected, unknown, expired, cancelled)
// that have not been acknowledged in their current state, in enqueue order: what a caller
// that tells of each outcome (and marks it told with Acknowledge) has yet to tell after a
// crash. A file keeps them in an index, so this reads those entries alone; every entry that
// becomes settled, or changes while settled, is in it until acknowledged, and a file of an
// earlier format has every settled entry in it. A queue in PostgreSQL keeps them in a partial
// index too; tables made before it have every settled entry in it when they are first opened.
func (o *Outbox) Unacknowledged() ([]Entry, error) {
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return nil, errClosed
	}
	ctx, cancel := o.opContext()
	defer cancel()
	recs, err := o.store.unacknowledged(ctx)
	if err != nil {
		return nil, err
	}
	return toEntries(recs)
}

// Acknowledge takes each entry out of Unacknowledged while its state and attempts are still
// those of its Ack, in one commit: an ack of a state the entry has left since, or of an entry
// pruned since, changes nothing. A queue in PostgreSQL acknowledges them in one statement per
// 1,000 acks and tells no WithStateChange of it: an acknowledgement is no change of the entry.
func (o *Outbox) Acknowledge(acks ...Ack) error {
	if len(acks) == 0 {
		return nil
	}
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return errClosed
	}
	ctx, cancel := o.opContext()
	defer cancel()
	return o.store.acknowledge(ctx, acks)
}

func containsState(states []State, s State) bool {
	for _, x := range states {
		if x == s {
			return true
		}
	}
	return false
}

// Cancel moves a Pending or Unknown entry to Cancelled, so it is never sent. Any other state
// (the entry is being sent, or is already final) is ErrWrongState and changes nothing.
func (o *Outbox) Cancel(id string) error {
	o.gate.Lock()
	defer o.gate.Unlock()
	if o.closed {
		return errClosed
	}
	o.mu.Lock()
	it := o.items[id]
	if it != nil {
		if it.busy {
			o.mu.Unlock()
			return fmt.Errorf("%w: %q is being sent", ErrWrongState, id)
		}
		it.busy = true // keeps Run from claiming it while the change commits
	}
	o.mu.Unlock()

	var done *record
	err := o.change(id, func(r *record) error {
		if r.State != Pending && r.State != Unknown {
			return fmt.Errorf("%w: %q is %s; only pending and unknown entries can be cancelled", ErrWrongState, id, r.State)
		}
		r.State = Cancelled
		done = r
		return nil
	})
	o.mu.Lock()
	if it != nil {
		if err == nil {
			o.remove(it)
		} else {
			it.busy = false
		}
	}
	o.mu.Unlock()
	o.signal()
	if err != nil {
		return err
	}
	o.logState(done, false)
	return nil
}

// Resend moves an Unknown entry back to Pending: a person checked the printer and wants the
// job sent. It goes out in its original place in the order of its printer, unless it is past
// its ExpireAfter by then, which makes it Expired. Any other state is ErrWrongState.
func (o *Outbox) Resend(id string) error {
	o.gate.Lock()
	defer o.gate.Unlock()
	if o.closed {
		return errClosed
	}
	var done *record
	err := o.change(id, func(r *record) error {
		if r.State != Unknown {
			return fmt.Errorf("%w: %q is %s; only unknown entries can be resent", ErrWrongState, id, r.State)
		}
		r.State = Pending
		done = r
		return nil
	})
	if err != nil {
		return err
	}
	o.added(done)
	o.logState(done, false)
	return nil
}

// change applies f to the record of id and commits it with a new Updated time; f's error
// leaves the record as it was.
func (o *Outbox) change(id string, f func(*record) error) error {
	ctx, cancel := o.opContext()
	defer cancel()
	_, err := o.store.change(ctx, id, o.now().UTC().Round(0), f)
	return err
}

// Close stops a running Run (letting a request in flight settle first, as when its context
// ends), waits for it, ends every Wait, hands the last changes to the WithStateChange callback
// and waits for it to return, and closes the file. Calls after Close fail; Close itself can be
// called again.
func (o *Outbox) Close() error {
	o.mu.Lock()
	if !o.closeReq {
		o.closeReq = true
		close(o.closing)
	}
	done := o.runDone
	o.mu.Unlock()
	if done != nil {
		<-done
	}
	o.gate.Lock()
	first := !o.closed
	o.closed = true // nothing writes from here on
	o.gate.Unlock()
	if !first {
		return nil
	}
	// Outside the gate, so the callback may still call Get (and be told the outbox is closed)
	// without waiting for Close.
	if s, ok := o.store.(sharedStore); ok {
		s.flush() // the changes this process committed are told, as the file store's are
	}
	if o.notify != nil {
		o.notify.stop()
	}
	return o.store.close()
}

// signal wakes Run, if it sleeps.
func (o *Outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func invalid(op, format string, args ...any) error {
	return fmt.Errorf("%w: outbox.%s: %s", labelprinter.ErrInvalidArgument, op, fmt.Sprintf(format, args...))
}

// checkText refuses IDs that would not survive a listing or a log line.
func checkText(what, s string) error {
	if len(s) > maxIDLen {
		return invalid("Enqueue", "%s is longer than %d bytes", what, maxIDLen)
	}
	if !utf8.ValidString(s) {
		return invalid("Enqueue", "%s is not valid UTF-8", what)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return invalid("Enqueue", "%s %q contains a control character", what, s)
		}
	}
	return nil
}

// checkJob checks the job against the intent's kind and returns the body to store: the job's
// JSON for KindPrintJob, nothing for the others, which send no job.
func checkJob(in Intent) (json.RawMessage, error) {
	switch in.Kind {
	case KindPrintJob:
		if err := in.Job.Validate(); err != nil {
			return nil, err
		}
		return in.Job.MarshalJSON()
	case KindDeselect, KindTrigger:
		if b, err := in.Job.MarshalJSON(); err != nil || string(b) != "{}" {
			return nil, invalid("Enqueue", "a %s intent sends no job; Job must be empty", in.Kind)
		}
		if in.Kind == KindTrigger && in.Printer == "" {
			return nil, invalid("Enqueue", "a trigger needs a printer name: the contract has no single-printer trigger")
		}
		return nil, nil
	}
	return nil, invalid("Enqueue", "unknown kind %v", in.Kind)
}

// checkPrinter applies the SDK's rules for a printer name (TestPrinterNamesAgreeWithSDK holds
// them together), so a bad name is refused at Enqueue and not when the job is due.
func checkPrinter(name string) error {
	if name == "." || name == ".." {
		return invalid("Enqueue", "printer name %q would change the path", name)
	}
	if !utf8.ValidString(name) {
		return invalid("Enqueue", "printer name is not valid UTF-8")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return invalid("Enqueue", "printer name %q contains a control character", name)
		}
	}
	return nil
}
