package outbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	labelprinter "github.com/labelprinter/go-labelprinter"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
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
	// maxIDLen bounds an intent's ID, which is a key in the file and a column in listings.
	maxIDLen = 256
	// formatVersion marks a file as an outbox of this layout: entries of every kind and the IDs
	// of pruned entries. formatV1, the layout before both, is read and brought up to it.
	formatVersion = "go-labelprinter outbox 2"
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
	retry    time.Duration
	logger   *slog.Logger
	onChange func(Entry)
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
// after a failure, Expired and the others at info, Unknown at warn. Nothing is logged without it.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("%w: outbox.WithLogger: logger is nil", labelprinter.ErrInvalidArgument)
		}
		o.logger = l
		return nil
	}
}

// Outbox is a durable queue of print intents in one file. It is safe for concurrent use; one
// Run delivers while any number of goroutines Enqueue, Get, List, Cancel and Resend.
type Outbox struct {
	db     *bolt.DB
	client *labelprinter.Client
	retry  time.Duration
	log    *slog.Logger
	now    func() time.Time

	// writers counts writes in flight: a lone write commits at once, concurrent ones are
	// grouped by bbolt's Batch.
	writers atomic.Int32
	// curTx is the write transaction whose commit handler is registered, and curChanges the
	// records it changed; they are only touched inside write transactions, which bbolt runs
	// one at a time.
	curTx      *bolt.Tx
	curChanges *txChanges
	commits    atomic.Int64
	notify     *notifier // nil without WithStateChange

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
	closeReq bool // Close was called
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
	o := options{retry: defaultRetryInterval}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: outbox.Open: nil option", labelprinter.ErrInvalidArgument)
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		case errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
			return nil, fmt.Errorf("outbox: %w", err)
		}
		return nil, fmt.Errorf("outbox: %s is not an outbox file: %w", path, err)
	}
	db.MaxBatchDelay = batchDelay
	db.MaxBatchSize = batchSize
	ob := &Outbox{
		db:      db,
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
	if err := ob.load(path); err != nil {
		_ = db.Close()
		return nil, err
	}
	return ob, nil
}

// load checks the file's format (creating the buckets of a new file, and bringing a file of
// the first format up to this one), turns Sending entries to Unknown and builds the index of
// Pending ones, in one transaction.
func (o *Outbox) load(path string) error {
	var unknown []*record
	err := o.db.Update(func(tx *bolt.Tx) error {
		o.track(tx)
		if o.notify != nil {
			// The first transaction: the notifier counts commits from here.
			o.notify.next = uint64(tx.ID())
		}
		unknown = unknown[:0]
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			empty := true
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return fmt.Errorf("outbox: %s is not an outbox file: a bbolt database without the outbox's buckets", path)
			}
			m, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			if err := m.Put(keyFormat, []byte(formatVersion)); err != nil {
				return err
			}
			for _, b := range [][]byte{bucketEntries, bucketIDs, bucketPruned} {
				if _, err := tx.CreateBucket(b); err != nil {
					return err
				}
			}
			return nil
		}
		switch f := meta.Get(keyFormat); {
		case bytes.Equal(f, []byte(formatVersion)):
		case bytes.Equal(f, []byte(formatV1)):
			// The first format lacks kinds and pruned IDs; its entries read unchanged. The new
			// mark keeps a version that knows neither from misreading the file afterwards.
			if _, err := tx.CreateBucketIfNotExists(bucketPruned); err != nil {
				return err
			}
			if err := meta.Put(keyFormat, []byte(formatVersion)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("outbox: %s has format %q; this version reads %q and %q", path, f, formatVersion, formatV1)
		}
		entries := tx.Bucket(bucketEntries)
		if entries == nil || tx.Bucket(bucketIDs) == nil || tx.Bucket(bucketPruned) == nil {
			return fmt.Errorf("outbox: %s is not an outbox file: buckets missing", path)
		}
		now := o.now().UTC()
		o.items = map[string]*item{}
		o.lanes = map[string]*lane{}
		o.expiry = nil
		c := entries.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			r, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("%w (in %s)", err, path)
			}
			switch r.State {
			case Sending:
				r.State = Unknown
				r.Updated = now
				r.Error = "the process stopped while the request was being sent; it may or may not have reached the printer"
				b, err := r.encode()
				if err != nil {
					return err
				}
				if err := entries.Put(bytes.Clone(k), b); err != nil {
					return err
				}
				o.changed(r)
				unknown = append(unknown, r)
			case Pending:
				o.insert(newItem(r))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range unknown {
		o.logState(r, true)
	}
	return nil
}

// write commits fn durably. A write with no other in flight commits at once; concurrent ones
// go through bbolt's Batch, which runs them in one transaction and one fsync. Batch may run fn
// more than once, so fn must set everything it reports from scratch on each run.
func (o *Outbox) write(fn func(*bolt.Tx) error) error {
	tracked := func(tx *bolt.Tx) error {
		o.track(tx)
		return fn(tx)
	}
	defer o.writers.Add(-1)
	if o.writers.Add(1) == 1 {
		return o.db.Update(tracked)
	}
	return o.db.Batch(tracked)
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
	// A repeated ID is answered from a read, which costs no commit.
	if r, err := o.lookup(in.ID); err == nil {
		if err := checkHeld(r, in); err != nil {
			return Entry{}, err
		}
		return r.entry()
	} else if errors.Is(err, ErrPruned) {
		return Entry{}, prunedEnqueue(in.ID, err)
	} else if !errors.Is(err, ErrNotFound) {
		return Entry{}, err
	}

	now := o.now().UTC().Round(0)
	var (
		stored  *record
		created bool
	)
	err = o.write(func(tx *bolt.Tx) error {
		stored, created = nil, false
		entries, ids := tx.Bucket(bucketEntries), tx.Bucket(bucketIDs)
		if k := ids.Get([]byte(in.ID)); k != nil {
			r, err := decodeRecord(entries.Get(k))
			if err != nil {
				return err
			}
			stored = r
			return checkHeld(r, in)
		}
		if err := pruned(tx, in.ID); err != nil {
			return err
		}
		seq, err := entries.NextSequence()
		if err != nil {
			return err
		}
		r := &record{Seq: seq, ID: in.ID, Printer: in.Printer, Kind: kindName(in.Kind), Job: body,
			ExpireAfter: in.ExpireAfter, State: Pending, Enqueued: now, Updated: now}
		b, err := r.encode()
		if err != nil {
			return err
		}
		key := seqKey(seq)
		if err := entries.Put(key, b); err != nil {
			return err
		}
		if err := ids.Put([]byte(in.ID), key); err != nil {
			return err
		}
		stored, created = r, true
		o.changed(r)
		return nil
	})
	if errors.Is(err, ErrPruned) {
		return Entry{}, prunedEnqueue(in.ID, err)
	}
	if errors.Is(err, ErrIDConflict) {
		return Entry{}, err
	}
	if err != nil {
		return Entry{}, fmt.Errorf("outbox: enqueue %q: %w", in.ID, err)
	}
	if created {
		o.mu.Lock()
		o.insert(newItem(stored))
		o.mu.Unlock()
		o.signal()
	}
	return stored.entry()
}

// lookup reads the record of id.
func (o *Outbox) lookup(id string) (*record, error) {
	var r *record
	err := o.db.View(func(tx *bolt.Tx) error {
		k := tx.Bucket(bucketIDs).Get([]byte(id))
		if k == nil {
			return notFound(tx, id)
		}
		var err error
		r, err = decodeRecord(tx.Bucket(bucketEntries).Get(k))
		return err
	})
	return r, err
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

// List returns the entries in the given states, in enqueue order; with no states, all of them.
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
	out := []Entry{}
	err := o.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEntries).ForEach(func(_, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			if len(states) > 0 && !containsState(states, r.State) {
				return nil
			}
			e, err := r.entry()
			if err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
	o.mu.Lock()
	o.insert(newItem(done))
	o.mu.Unlock()
	o.signal()
	o.logState(done, false)
	return nil
}

// change applies f to the record of id and commits it with a new Updated time; f's error
// leaves the record as it was.
func (o *Outbox) change(id string, f func(*record) error) error {
	now := o.now().UTC().Round(0)
	return o.write(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		k := tx.Bucket(bucketIDs).Get([]byte(id))
		if k == nil {
			return notFound(tx, id)
		}
		r, err := decodeRecord(entries.Get(k))
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
		r.Updated = now
		b, err := r.encode()
		if err != nil {
			return err
		}
		o.changed(r)
		return entries.Put(bytes.Clone(k), b)
	})
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
	if o.notify != nil {
		o.notify.stop()
	}
	return o.db.Close()
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
