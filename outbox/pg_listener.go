package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	labelprinter "github.com/labelprinter/go-labelprinter"
)

// This file holds the listener several queues of one process share: one connection that
// LISTENs on each queue's channel and hands every notification to the queues of its channel.
// PostgreSQL wakes every listening connection of a database for every notification, whatever
// its channel, so N queues with a connection each cost the server N wake-ups a change.

// PostgresListener is one connection to a PostgreSQL database that hears the notifications of
// every queue opened with WithListener on it, in the place of a listening connection per
// queue. It connects when the first such queue opens, and lets the connection go once the last
// one is closed; it needs no Close of its own. A lost connection is made again, with back-off,
// and every queue on it then looks again at what it may have missed, as a queue's own
// listener does.
type PostgresListener struct {
	dsn    string
	cfg    *pgx.ConnConfig
	secret []string

	mu       sync.Mutex
	stores   map[*pgStore]bool // true once LISTEN on its channel was sent on this connection
	added    map[*pgStore]chan error
	channels map[string]int // the queues on each channel
	changed  bool           // stores came or went since the loop last looked
	stopWait context.CancelFunc
	// The running loop, if any: it runs while a queue is on the listener.
	stopLoop context.CancelFunc
	done     chan struct{}
	// groups are the batches of the adds of the queues opened with each DSN (pg_group.go).
	groups map[string]*pgGroups
	// dispatch is held while the loop hands a notification or a look-back to the stores, so
	// that a store that leaves is not called after remove has returned.
	dispatch sync.Mutex
}

// NewPostgresListener returns a listener on the database at dsn, read as OpenPostgres reads
// it: the same database the queues are in, reached directly or through a pooler in session
// mode (a pooler in transaction mode does not carry LISTEN: OpenPostgres refuses a listener
// whose notifications do not come back, with ErrNoNotifications). Its errors never carry the
// password.
func NewPostgresListener(dsn string) (*PostgresListener, error) {
	cfg, secret, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("outbox.NewPostgresListener: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = pgConnectTimeout
	}
	return &PostgresListener{dsn: dsn, cfg: cfg.ConnConfig, secret: secret,
		stores: map[*pgStore]bool{}, added: map[*pgStore]chan error{}, channels: map[string]int{},
		groups: map[string]*pgGroups{}}, nil
}

// WithListener has a queue in PostgreSQL hear its notifications through l, a connection it
// shares with the other queues of this process opened with it, instead of a connection of its
// own; it replaces WithListenDSN, whose role l's DSN takes when it is not OpenPostgres's.
// Queues opened on l with the same DSN also share their Enqueues' and reads' statements: those
// that arrive while one is in flight go together, in one statement (one commit for the
// Enqueues), once it returns; one made while none is in flight goes at once. The file store
// ignores it.
func WithListener(l *PostgresListener) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("%w: outbox.WithListener: nil listener", labelprinter.ErrInvalidArgument)
		}
		o.listener = l
		return nil
	}
}

// groupsFor returns the batches of the queues opened on l with dsn: their adds share
// statements, being in one database and its schemas.
func (l *PostgresListener) groupsFor(dsn string) *pgGroups {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.groups[dsn]
	if g == nil {
		g = newPGGroups()
		l.groups[dsn] = g
	}
	return g
}

// add has the loop LISTEN on s's channel, starting the loop if it is not running, and returns
// once it does, or with the error of the connection the loop could not make.
func (l *PostgresListener) add(s *pgStore) error {
	ready := make(chan error, 1)
	l.mu.Lock()
	l.stores[s] = false
	l.added[s] = ready
	l.channels[s.channel]++
	l.poke()
	if l.stopLoop == nil {
		ctx, stop := context.WithCancel(context.Background())
		l.stopLoop, l.done = stop, make(chan struct{})
		go l.loop(ctx, l.done)
	}
	l.mu.Unlock()
	err := <-ready
	if err != nil {
		l.remove(s)
	}
	return err
}

// remove takes s off the listener; once it returns, the loop calls none of s's methods, and
// when s was the last queue, the loop and its connection are gone.
func (l *PostgresListener) remove(s *pgStore) {
	var done chan struct{}
	l.mu.Lock()
	if _, ok := l.stores[s]; ok {
		delete(l.stores, s)
		delete(l.added, s)
		if l.channels[s.channel]--; l.channels[s.channel] == 0 {
			delete(l.channels, s.channel)
		}
		l.poke()
	}
	if len(l.stores) == 0 && l.stopLoop != nil {
		// Stopped under mu: the loop looks at its context under mu before it touches the
		// listener's state, so a loop started by a later add is the only one that does.
		l.stopLoop()
		l.stopLoop, done = nil, l.done
	}
	l.mu.Unlock()
	l.dispatch.Lock() // a notification being handed to s
	//lint:ignore SA2001 waiting for the loop to let go is the point
	l.dispatch.Unlock()
	if done != nil {
		<-done
	}
}

// poke has the loop look at the stores at once; l.mu is held.
func (l *PostgresListener) poke() {
	l.changed = true
	if l.stopWait != nil {
		l.stopWait()
	}
}

// each calls f for every store the loop listens for, under dispatch.
func (l *PostgresListener) each(ctx context.Context, f func(s *pgStore)) {
	l.dispatch.Lock()
	defer l.dispatch.Unlock()
	l.mu.Lock()
	if ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	var stores []*pgStore
	for s, on := range l.stores {
		if on {
			stores = append(stores, s)
		}
	}
	l.mu.Unlock()
	for _, s := range stores {
		f(s)
	}
}

// loop is what each queue's listenLoop is for one queue, for all of them: it hands each
// notification to the queues of its channel, in the order they come; every pgHeardWithin each
// queue reads back its own changes that no notification brought; a connection made again
// after a loss wakes every queue's Wait and Run. It ends with ctx, when no queue is left.
func (l *PostgresListener) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	wait := 100 * time.Millisecond
	lost := false
	for ctx.Err() == nil {
		conn, err := l.connect(ctx)
		if err != nil {
			l.failAdded(ctx, err)
			until := time.Now().Add(wait)
			for d := time.Until(until); d > 0 && ctx.Err() == nil; d = time.Until(until) {
				select {
				case <-ctx.Done():
				case <-time.After(min(d, pgHeardWithin)):
				}
				l.each(ctx, func(s *pgStore) { s.catchUp(ctx) })
			}
			wait = min(wait*2, 5*time.Second)
			lost = true
			continue
		}
		wait = 100 * time.Millisecond
		l.serve(ctx, conn, lost)
		_ = conn.Close(context.Background())
		lost = true
	}
}

// serve listens on conn until it fails or no queue is left; lost says notifications may have
// been missed since the queues already there began listening.
func (l *PostgresListener) serve(ctx context.Context, conn *pgx.Conn, lost bool) {
	l.mu.Lock()
	if ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	for s := range l.stores {
		l.stores[s] = false // LISTEN again on this connection
	}
	listening := map[string]bool{}
	l.changed = true
	l.mu.Unlock()
	looked := time.Now()
	for {
		l.mu.Lock()
		if ctx.Err() != nil {
			l.mu.Unlock()
			return
		}
		if l.changed {
			l.changed = false
			want := map[string]bool{}
			for ch := range l.channels {
				want[ch] = true
			}
			var fresh, again []*pgStore
			for s, on := range l.stores {
				if !on {
					if _, isNew := l.added[s]; isNew {
						fresh = append(fresh, s)
					} else {
						again = append(again, s)
					}
				}
			}
			l.mu.Unlock()
			if err := l.sync(ctx, conn, listening, want); err != nil {
				l.failAdded(ctx, err)
				return
			}
			l.mu.Lock()
			if ctx.Err() != nil {
				l.mu.Unlock()
				return
			}
			for _, s := range append(fresh, again...) {
				if _, ok := l.stores[s]; ok {
					l.stores[s] = true
				}
				if c := l.added[s]; c != nil {
					c <- nil
					delete(l.added, s)
				}
			}
			l.mu.Unlock()
			if lost {
				// Those already there may have missed changes while the connection was down.
				l.dispatch.Lock()
				for _, s := range again {
					l.mu.Lock()
					_, ok := l.stores[s]
					l.mu.Unlock()
					if ok {
						s.gap()
					}
				}
				l.dispatch.Unlock()
			}
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, max(pgHeardWithin-time.Since(looked), time.Millisecond))
		l.stopWait = cancel
		l.mu.Unlock()
		n, err := conn.WaitForNotification(wctx)
		l.mu.Lock()
		if ctx.Err() == nil {
			l.stopWait = nil
		}
		l.mu.Unlock()
		cancel()
		if err == nil {
			l.heard(ctx, n.Channel, n.Payload)
		} else if conn.IsClosed() || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			return
		}
		if time.Since(looked) >= pgHeardWithin {
			looked = time.Now()
			l.each(ctx, func(s *pgStore) { s.catchUp(ctx) })
		}
	}
}

// sync LISTENs on the channels of want that conn does not listen on yet, and UNLISTENs those it
// no longer needs.
func (l *PostgresListener) sync(ctx context.Context, conn *pgx.Conn, listening, want map[string]bool) error {
	cctx, cancel := context.WithTimeout(ctx, pgConnectTimeout+time.Second)
	defer cancel()
	for ch := range want {
		if !listening[ch] {
			if _, err := conn.Exec(cctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
				return l.fail("listening", err)
			}
			listening[ch] = true
		}
	}
	for ch := range listening {
		if !want[ch] {
			if _, err := conn.Exec(cctx, "UNLISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
				return l.fail("listening", err)
			}
			delete(listening, ch)
		}
	}
	return nil
}

// heard hands a notification to the queues of its channel.
func (l *PostgresListener) heard(ctx context.Context, channel, payload string) {
	l.dispatch.Lock()
	defer l.dispatch.Unlock()
	l.mu.Lock()
	var stores []*pgStore
	for s, on := range l.stores {
		if on && s.channel == channel && ctx.Err() == nil {
			stores = append(stores, s)
		}
	}
	l.mu.Unlock()
	for _, s := range stores {
		s.heard(ctx, payload)
	}
}

// failAdded answers the queues waiting for their first LISTEN with err: their OpenPostgres
// fails, as with a connection of their own.
func (l *PostgresListener) failAdded(ctx context.Context, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	for s, c := range l.added {
		c <- err
		delete(l.added, s)
	}
}

func (l *PostgresListener) connect(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, pgConnectTimeout+time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, l.cfg)
	if err != nil {
		return nil, l.fail("connecting", err)
	}
	return conn, nil
}

// fail wraps err, a failure of the listener's database while doing what, without the password.
func (l *PostgresListener) fail(what string, err error) error {
	return &pgError{msg: redact(fmt.Sprintf("outbox: PostgreSQL listener: %s: %v", what, err), l.secret), err: err}
}
