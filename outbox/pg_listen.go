package outbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	labelprinter "github.com/labelprinter/go-labelprinter"
)

// This file holds how a PostgreSQL queue's committed changes reach the Outbox: a connection
// that LISTENs on the queue's channel, the check at open that a notification comes back on it,
// and the read-back of this Outbox's own changes that no notification brought, so that
// nothing waits on a notification forever.

const (
	// pgProbeWait is how long OpenPostgres waits for the notification it sends itself.
	pgProbeWait = 3 * time.Second
	// pgHeardWithin is how long a change this Outbox committed may go unheard before it is
	// read back; the listener looks every pgHeardWithin, so a change is told within twice it.
	pgHeardWithin = time.Second
	// pgRecheck is how often a Wait on a queue in PostgreSQL reads its entry while no
	// notification wakes it.
	pgRecheck = 2 * time.Second
	// pgToldKept is how many entries' last told change the listener keeps.
	pgToldKept = 1 << 16
)

// ErrNoNotifications is what OpenPostgres returns, wrapped in an error that says which
// connection and what to do, when a notification it sent on the queue's channel did not come
// back: a pooler in transaction mode (PgBouncer's usual pool_mode) runs each transaction on
// whichever server session is free, so the session that LISTENs is not the client's, and no
// notification reaches it. WithListenDSN gives the outbox a connection that does.
var ErrNoNotifications = errors.New("the queue's notifications do not reach the outbox")

// WithListenDSN has a queue in PostgreSQL listen for its notifications on a connection to
// dsn, the same database reached without a pooler in transaction mode (directly, or through
// a pooler in session mode), while everything else goes through OpenPostgres's DSN. Such a
// pooler carries the leases and every transaction, but not LISTEN: OpenPostgres refuses a DSN
// whose notifications do not come back (ErrNoNotifications) unless the listen DSN's do. The
// file store ignores it.
func WithListenDSN(dsn string) Option {
	return func(o *options) error {
		if strings.TrimSpace(dsn) == "" {
			return fmt.Errorf("%w: outbox.WithListenDSN: empty DSN", labelprinter.ErrInvalidArgument)
		}
		o.listenDSN = dsn
		return nil
	}
}

// unheard is a change this Outbox committed whose notification has not come yet.
type unheard struct {
	updated time.Time // the change's Updated
	at      time.Time // when it was committed, by this host's monotonic clock
}

// listen starts the listener and returns once it LISTENs and has heard a notification it
// sent itself (or could not, or did not within wait).
func (s *pgStore) listen(wait time.Duration) error {
	var err error
	if s.shared != nil {
		s.lDone = make(chan struct{})
		close(s.lDone)
		s.stopL = func() { s.shared.remove(s) }
		err = s.shared.add(s)
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopL = cancel
		s.lDone = make(chan struct{})
		s.ready = make(chan error, 1)
		go s.listenLoop(ctx)
		err = <-s.ready
	}
	if err == nil && wait > 0 && !s.flushWithin(wait) {
		err = s.deaf(wait)
	}
	if err != nil {
		s.stopL()
		<-s.lDone
		return err
	}
	return nil
}

// named switches the store to a pool that prepares each statement once per connection, by
// name, and then only binds and runs it, instead of having the server parse and plan it again
// on every call: the larger part of the server's CPU per statement. It is called only when
// the notification OpenPostgres sent through dsn came back on a connection to dsn itself:
// then dsn reaches sessions of the server's own, which keep what is prepared in them, and not
// a pooler in transaction mode, which would hand the next transaction a session without them
// (there the store keeps the pool that prepares nothing: with WithListenDSN, or when the DSN
// chooses default_query_exec_mode itself). A pool that cannot be made leaves the first in use.
func (s *pgStore) named(ctx context.Context, dsn string, cfg *pgxpool.Config) {
	if strings.Contains(dsn, "default_query_exec_mode") {
		return
	}
	cfg = cfg.Copy()
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	if p, err := pgxpool.NewWithConfig(ctx, cfg); err == nil {
		s.pool.Store(p)
	}
}

// deaf is the error for a listener that did not hear its own notification within wait.
func (s *pgStore) deaf(wait time.Duration) error {
	if s.listenDSN {
		return fmt.Errorf("outbox: PostgreSQL: %w (one sent at open did not come back on the listen DSN's connection within %v): "+
			"the listen DSN must reach the database without a pooler in transaction mode (directly, or through a pooler in session mode)", ErrNoNotifications, wait)
	}
	return fmt.Errorf("outbox: PostgreSQL: %w (one sent at open did not come back within %v): "+
		"the DSN likely goes through a pooler in transaction mode (such as PgBouncer with pool_mode = transaction), which carries transactions but not LISTEN; "+
		"give a DSN that reaches the database directly (or through a pooler in session mode) for listening with outbox.WithListenDSN", ErrNoNotifications, wait)
}

// listenLoop hands every change the queue's channel tells to the Outbox, in the order the
// changes were committed; a lost connection is made again, with back-off, and every Wait and
// Run is woken then, since changes may have gone unheard meanwhile. Every pgHeardWithin it
// reads back the changes this Outbox committed that no notification has brought since.
func (s *pgStore) listenLoop(ctx context.Context) {
	defer close(s.lDone)
	first := true
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := s.connectListener(ctx)
		if first {
			s.ready <- err
			if err != nil {
				return
			}
			first = false
		} else if err == nil {
			s.gap()
		}
		if err != nil {
			until := time.Now().Add(wait)
			for d := time.Until(until); d > 0 && ctx.Err() == nil; d = time.Until(until) {
				select {
				case <-ctx.Done():
				case <-time.After(min(d, pgHeardWithin)):
				}
				s.catchUp(ctx)
			}
			wait = min(wait*2, 5*time.Second)
			continue
		}
		wait = 100 * time.Millisecond
		for {
			wctx, cancel := context.WithTimeout(ctx, pgHeardWithin)
			n, err := conn.WaitForNotification(wctx)
			cancel()
			if err == nil {
				s.heard(ctx, n.Payload)
			} else if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed() {
				break
			}
			s.catchUp(ctx)
		}
		_ = conn.Close(context.Background())
	}
}

func (s *pgStore) connectListener(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, pgConnectTimeout+time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, s.connCfg)
	if err != nil {
		return nil, s.fail("connecting", err)
	}
	if _, err := conn.Exec(cctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		_ = conn.Close(context.Background())
		return nil, s.fail("listening", err)
	}
	return conn, nil
}

// heard hands one notification's change to the Outbox.
func (s *pgStore) heard(ctx context.Context, payload string) {
	if strings.HasPrefix(payload, "flush ") {
		s.flushMu.Lock()
		if c := s.flushing[payload]; c != nil {
			close(c)
			delete(s.flushing, payload)
		}
		s.flushMu.Unlock()
		return
	}
	var r record
	if err := json.Unmarshal([]byte(payload), &r); err != nil {
		return
	}
	var flags struct {
		Trimmed bool `json:"trimmed"`
		New     bool `json:"new"`
	}
	_ = json.Unmarshal([]byte(payload), &flags)
	if flags.New && s.early[r.Seq] {
		// Its Pending was told already, ahead of a later change that came first.
		delete(s.early, r.Seq)
		return
	}
	if flags.Trimmed {
		// Too long to be told whole: read back what it is now.
		rctx, cancel := context.WithTimeout(ctx, opTimeout)
		got, err := scanRecord(s.db().QueryRow(rctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries WHERE queue = $1 AND seq = $2`, s.queue, int64(r.Seq)))
		cancel()
		if err != nil {
			return
		}
		r = *got
	}
	r.Enqueued, r.Updated = r.Enqueued.UTC(), r.Updated.UTC()
	if string(r.Job) == "null" {
		r.Job = nil
	}
	if string(r.Response) == "null" {
		r.Response = nil
	}
	s.tellRecord(&r, flags.New)
}

// tellRecord tells r, a change heard or read back, unless a change of the entry as recent was
// told already; isNew says it is the notification of a new entry.
func (s *pgStore) tellRecord(r *record, isNew bool) {
	if isNew {
		s.remember(r.Seq)
	} else if !s.newTold[r.Seq] && r.Enqueued.After(s.since) {
		// A change of an entry whose Pending has not been told yet (it is told just after
		// its commit, and a Run can be quicker): the entry's changes are told in order, so
		// its Pending goes first.
		first := *r
		first.State, first.Attempts, first.Error, first.Response, first.Updated = Pending, 0, "", nil, r.Enqueued
		if s.tell(&first) {
			s.early[r.Seq] = true
		}
		s.remember(r.Seq)
	}
	s.tell(r)
}

// tell hands r to the Outbox unless a change of the entry at least as recent was told (every
// change of an entry has a later Updated than the one before); false when it did not.
func (s *pgStore) tell(r *record) bool {
	s.toldMu.Lock()
	last, ok := s.toldAt[r.Seq]
	if ok && !r.Updated.After(last) {
		s.toldMu.Unlock()
		return false
	}
	if !ok {
		s.toldOrder = append(s.toldOrder, r.Seq)
		if len(s.toldOrder) > pgToldKept {
			delete(s.toldAt, s.toldOrder[0])
			s.toldOrder = s.toldOrder[1:]
		}
	}
	s.toldAt[r.Seq] = r.Updated
	u, own := s.unheard[r.Seq]
	own = own && r.Updated.Equal(u.updated) // this very change is this Outbox's commit
	if u, ok := s.unheard[r.Seq]; ok && !r.Updated.Before(u.updated) {
		delete(s.unheard, r.Seq)
	}
	s.toldMu.Unlock()
	s.told++
	s.hook.committed(s.told, []*record{r})
	s.onChange(r, own)
	return true
}

// expect notes changes this Outbox committed, which the listener reads back if no
// notification brings them within pgHeardWithin.
func (s *pgStore) expect(recs ...*record) {
	now := time.Now()
	s.toldMu.Lock()
	defer s.toldMu.Unlock()
	for _, r := range recs {
		if r == nil {
			continue
		}
		if last, ok := s.toldAt[r.Seq]; ok && !last.Before(r.Updated) {
			continue // heard already
		}
		if u, ok := s.unheard[r.Seq]; !ok || u.updated.Before(r.Updated) {
			s.unheard[r.Seq] = unheard{updated: r.Updated, at: now}
		}
	}
}

// catchUp reads back the entries of the changes this Outbox committed more than
// pgHeardWithin ago that no notification has brought, and tells what they are now.
func (s *pgStore) catchUp(ctx context.Context) {
	now := time.Now()
	var seqs []int64
	s.toldMu.Lock()
	for seq, u := range s.unheard {
		if now.Sub(u.at) >= pgHeardWithin {
			seqs = append(seqs, int64(seq))
		}
	}
	s.toldMu.Unlock()
	if len(seqs) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := s.db().Query(rctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND seq = ANY($2) AND pruned IS NULL`, s.queue, seqs)
	if err != nil {
		return // the next look tries again
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
	if err != nil {
		return
	}
	slices.SortFunc(recs, func(a, b *record) int { return a.Updated.Compare(b.Updated) })
	before := s.told
	for _, r := range recs {
		s.tellRecord(r, false)
	}
	if n := s.told - before; n > 0 {
		s.readBack += int(n)
		if s.log != nil && (s.warned.IsZero() || now.Sub(s.warned) >= time.Minute) {
			s.log.Warn("outbox: changes committed here were not heard by notification within a second and were read back instead; "+
				"is there a pooler in transaction mode between the listener and the database?", "read_back", s.readBack)
			s.warned, s.readBack = now, 0
		}
	}
	// What is still unheard is gone (pruned or forgotten) or was told as recent already.
	s.toldMu.Lock()
	for _, seq := range seqs {
		delete(s.unheard, uint64(seq))
	}
	s.toldMu.Unlock()
}

// remember notes that the Pending of seq was told, keeping the last 65536.
func (s *pgStore) remember(seq uint64) {
	if s.newTold[seq] {
		return
	}
	s.newTold[seq] = true
	s.newOrder = append(s.newOrder, seq)
	if len(s.newOrder) > 1<<16 {
		delete(s.newTold, s.newOrder[0])
		delete(s.early, s.newOrder[0])
		s.newOrder = s.newOrder[1:]
	}
}

// flush returns once the listener has heard every change committed before it was called
// (notifications come in commit order), or after a few seconds without the database.
func (s *pgStore) flush() {
	if s.unanswered.Load() {
		return
	}
	s.flushWithin(3 * time.Second)
}

// flushWithin sends a notification and reports whether the listener heard it within d.
func (s *pgStore) flushWithin(d time.Duration) bool {
	token := "flush " + rand.Text()
	c := make(chan struct{})
	s.flushMu.Lock()
	s.flushing[token] = c
	s.flushMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	heard := false
	if _, err := s.db().Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel, token); err == nil {
		select {
		case <-c:
			heard = true
		case <-ctx.Done():
		}
	}
	s.flushMu.Lock()
	delete(s.flushing, token)
	s.flushMu.Unlock()
	return heard
}

// toldState is the listener's record of what it told, shared with the committers.
type toldState struct {
	toldMu    sync.Mutex
	toldAt    map[uint64]time.Time // seq -> Updated of the last change told
	toldOrder []uint64
	unheard   map[uint64]unheard // this Outbox's commits not heard yet
	// Of the listener only: changes read back since the last warning, and when it was.
	readBack int
	warned   time.Time
}
