package outbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/fence"
	"github.com/labelprinter/go-labelprinter/internal/pgconf"
)

// This file holds the PostgreSQL store: one queue of a database that any number of Outboxes,
// in any number of processes, use at once. Each printer's lane is delivered by one Run at a
// time, the one holding the lane's lease row; time is the database's.

const (
	// pgSchemaVersion is the version of the tables this code reads and writes; a database
	// whose version row says more is refused.
	pgSchemaVersion = 1
	// defaultLeaseTTL is how long a lane's lease lasts without renewal.
	defaultLeaseTTL = 10 * time.Second
	// pgConnectTimeout bounds a connection attempt when the DSN sets none, so an unreachable
	// database fails an Enqueue in seconds and not at its context's deadline.
	pgConnectTimeout = 5 * time.Second
	// pgMaxConns is the pool's size when the DSN sets none: concurrent Enqueues each need a
	// connection, and PostgreSQL commits concurrent transactions together.
	pgMaxConns = 16
	// pgEnqueueTimeout bounds an Enqueue's work in the database: a server that stops answering
	// without closing its connections (a host gone without a word, a frozen process) fails it
	// then, and not at its context's deadline.
	pgEnqueueTimeout = 10 * time.Second
)

// WithLeaseTTL sets how long a Run's hold on a printer's lane lasts without renewal on a queue
// in PostgreSQL (default 10 s): a Run renews its leases well within d while it runs, and
// another Run takes a lane whose lease has run out, within d plus its polling interval (at
// most a second) of the holder's death. The file store has one owner and ignores it.
func WithLeaseTTL(d time.Duration) Option {
	return func(o *options) error {
		if d < 100*time.Millisecond {
			return fmt.Errorf("%w: outbox.WithLeaseTTL: the lease must last at least 100ms, got %v", labelprinter.ErrInvalidArgument, d)
		}
		o.leaseTTL = d
		return nil
	}
}

// pgSchema creates the tables in the first schema of the search_path. The trigger tells every
// committed change of an entry to the queue's channel, in commit order, as the record's JSON;
// a record too long for a notification is told by its sequence number, and the listener reads
// it back. A new entry is told by add, just after its commit: a NOTIFY in a transaction holds
// a lock of the whole database until its commit is flushed, which would make concurrent
// Enqueues wait for each other's disk writes instead of sharing them.
const pgSchema = `
CREATE TABLE IF NOT EXISTS labelprinter_outbox_version (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	version integer NOT NULL
);
CREATE TABLE IF NOT EXISTS labelprinter_outbox_entries (
	queue text NOT NULL,
	seq bigint GENERATED ALWAYS AS IDENTITY,
	id text NOT NULL,
	printer text NOT NULL,
	kind text NOT NULL,
	job text,
	expire_after bigint NOT NULL,
	state text NOT NULL,
	attempts integer NOT NULL DEFAULT 0,
	enqueued timestamptz NOT NULL DEFAULT now(),
	updated timestamptz NOT NULL DEFAULT now(),
	error text NOT NULL DEFAULT '',
	response text,
	pruned timestamptz,
	acknowledged text,
	PRIMARY KEY (queue, seq),
	UNIQUE (queue, id)
);
CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_open ON labelprinter_outbox_entries (queue, printer, seq)
	WHERE state IN ('pending', 'sending');
` + pgUnsettledIndex + `;
` + pgUnackedIndex + `;
CREATE TABLE IF NOT EXISTS labelprinter_outbox_lanes (
	queue text NOT NULL,
	printer text NOT NULL,
	owner text NOT NULL DEFAULT '',
	lease_until timestamptz NOT NULL DEFAULT '-infinity',
	in_flight bigint,
	PRIMARY KEY (queue, printer)
);
` + pgNotifyFunction + `;
DROP TRIGGER IF EXISTS labelprinter_outbox_notify ON labelprinter_outbox_entries;
CREATE TRIGGER labelprinter_outbox_notify AFTER UPDATE ON labelprinter_outbox_entries
	FOR EACH ROW EXECUTE FUNCTION labelprinter_outbox_notify();
`

// pgNotifyFunction is the trigger's function: it tells a listener every change of an entry
// but its pruning and its acknowledgement.
const pgNotifyFunction = `CREATE OR REPLACE FUNCTION labelprinter_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	p text;
BEGIN
	IF NEW.pruned IS NOT NULL THEN
		RETURN NULL;
	END IF;
	-- An acknowledgement alone is no change of the entry: nobody is told of it.
	IF NEW.updated = OLD.updated AND NEW.acknowledged IS DISTINCT FROM OLD.acknowledged THEN
		RETURN NULL;
	END IF;
	p := json_build_object('seq', NEW.seq, 'id', NEW.id, 'printer', NEW.printer,
		'kind', NEW.kind, 'job', NEW.job::json, 'expireAfter', NEW.expire_after, 'state', NEW.state,
		'attempts', NEW.attempts, 'enqueued', NEW.enqueued, 'updated', NEW.updated, 'error', NEW.error,
		'response', NEW.response::json)::text;
	IF octet_length(p) > 7900 THEN
		p := json_build_object('seq', NEW.seq, 'trimmed', true)::text;
	END IF;
	PERFORM pg_notify('lpo_' || md5(NEW.queue || E'\n' || TG_TABLE_SCHEMA), p);
	RETURN NULL;
END
$$`

// pgCols are the columns a record is read from, in scanRecord's order.
const pgCols = `seq, id, printer, kind, job, expire_after, state, attempts, enqueued, updated, error, response`

// pgStore is one queue in PostgreSQL.
type pgStore struct {
	sslAsked bool // the DSN chose an sslmode: a refused TLS connection is worth saying
	// pool is the store's pool: at first (and always, behind a pooler) one whose statements
	// keep nothing in their sessions, then, once the DSN is known to reach the server's own
	// sessions, one that prepares them (pg_listen.go's named). first is the one opened first,
	// kept until close so that nothing that took it before the swap finds it closed.
	pool  atomic.Pointer[pgxpool.Pool]
	first *pgxpool.Pool
	queue string
	owner string // this Outbox's name in the lanes it holds
	ttl   time.Duration
	// abandon ends this store's transactions on the server when their client leaves them
	// waiting longer than the lease: a runner cut off inside one must not hold its lane's
	// rows locked past its lease.
	abandon pgconf.Abandoned
	secret  []string // what to take out of every error: the password, as written and as sent

	offset atomic.Int64 // the database's clock minus this host's, in ns
	leases laneLeases   // the lanes held for certain, by this host's monotonic clock (lease.go)
	// unanswered: giving up the leases at the end of a Run timed out; Close does not wait
	// for the database again.
	unanswered atomic.Bool
	clock      func() time.Time // this host's clock: time.Now, but for tests

	// The listener: a connection of its own that LISTENs on the queue's channel, to the
	// listen DSN when there is one (pg_listen.go).
	connCfg   *pgx.ConnConfig
	listenDSN bool
	shared    *PostgresListener // WithListener's: listens instead of a connection of this store's own
	groups    *pgGroups         // the batches this queue's adds share (pg_group.go)
	channel   string
	hook      commitHook
	log       *slog.Logger              // WithLogger's, or nil
	onChange  func(r *record, own bool) // wakes Run; own: a change this Outbox committed
	gap       func()                    // notifications may have been missed: wake every Wait and Run
	stopL     context.CancelFunc
	lDone     chan struct{}
	ready     chan error // the first LISTEN's outcome
	told      uint64     // changes told, the listener's count
	flushMu   sync.Mutex
	flushing  map[string]chan struct{} // sentinels in flight, by payload
	// Of the listener only: when it began (the database's time), the entries whose Pending
	// it told, and those it told ahead of their own notification.
	since    time.Time
	newTold  map[uint64]bool
	newOrder []uint64
	early    map[uint64]bool
	toldState
}

// OpenPostgres opens the outbox queue named queue in the PostgreSQL database at dsn (a URL
// or keyword/value connection string, read as libpq does, PG* variables, PGPASSFILE and
// ~/.pgpass included), creating its tables in the DSN's search_path on first use, and returns
// an Outbox with the same methods and meaning as Open's. IDs are unique per queue; several
// queues share a database, and any number of Outboxes, in any number of processes on any
// number of machines, may open the same queue at once. c delivers the intents; it may be nil
// for an outbox that is only inspected or filled.
//
// Every Run may deliver, but each printer's entries are delivered by one Run at a time, the
// one holding the printer's lease (WithLeaseTTL); a Run that takes over a lane whose holder's
// lease ran out turns the entries that holder left Sending into Unknown, as Open does with a
// file after a crash. Leases, expiry and Prune go by the database's clock. Wait and
// WithStateChange hear of the changes every process commits on the queue, through
// LISTEN/NOTIFY, each entry's changes in order and all but new entries' in commit order (a
// new entry is told just after its commit); an Outbox that never runs keeps what
// WithStateChange has to tell in memory until Close, other processes' changes included.
// OpenPostgres checks that a notification it sends itself comes back within 3 s (one round
// trip when it does); a DSN through a pooler in transaction mode, which does not carry
// LISTEN, is refused with an error matching ErrNoNotifications unless WithListenDSN (or
// WithListener, whose connection queues of one process share) gives a connection that hears
// it. Nothing waits on a notification alone: Wait reads its entry at
// least every 2 s, and a change this Outbox commits whose notification has not come within a
// second is read back and told to WithStateChange then (the entry as it is by then: a state
// in between may be skipped, but none is told twice or after a later one).
// Tables of a newer version are refused with an error that says so. No error of the outbox
// carries the DSN's password. Enqueue fails as soon as the database cannot be reached (a
// connection attempt is bounded by 5 s when the DSN sets no connect_timeout), and within 10 s
// when the server stops answering without closing its connections, saying whether the entry
// may have been stored. The queue belongs to the controller of the first client that opens
// it; a client for another controller is refused with a *ControllerError.
func OpenPostgres(ctx context.Context, dsn, queue string, c *labelprinter.Client, opts ...Option) (*Outbox, error) {
	if ctx == nil {
		return nil, invalid("OpenPostgres", "nil context")
	}
	if err := checkQueue(queue); err != nil {
		return nil, err
	}
	o, err := parseOptions("OpenPostgres", opts)
	if err != nil {
		return nil, err
	}
	if o.leaseTTL == 0 {
		o.leaseTTL = defaultLeaseTTL
	}
	cfg, secret, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = pgConnectTimeout
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = pgMaxConns
	}
	pgconf.NoSessionStatements(cfg, dsn)
	connCfg := cfg.ConnConfig.Copy()
	if o.tracer != nil {
		cfg.ConnConfig.Tracer = o.tracer
	}
	if o.listenDSN != "" {
		lcfg, lsecret, err := parseDSN(o.listenDSN)
		if err != nil {
			return nil, fmt.Errorf("outbox.WithListenDSN: %w", err)
		}
		if lcfg.ConnConfig.ConnectTimeout == 0 {
			lcfg.ConnConfig.ConnectTimeout = pgConnectTimeout
		}
		connCfg = lcfg.ConnConfig
		secret = append(secret, lsecret...)
	}
	if o.listener != nil && o.listenDSN != "" {
		return nil, invalid("OpenPostgres", "WithListener and WithListenDSN both given; the listener's DSN is the listen DSN")
	}
	ob := newOutbox(c, o)
	ob.recheck = pgRecheck
	s := &pgStore{clock: time.Now, queue: queue, sslAsked: pgconf.SSLModeAsked(dsn), ttl: o.leaseTTL, abandon: pgconf.AbandonAfter(o.leaseTTL), secret: secret, connCfg: connCfg, listenDSN: o.listenDSN != "", hook: ob.hook(),
		leases: laneLeases{ttl: o.leaseTTL}, owner: ownerName(), flushing: map[string]chan struct{}{}, newTold: map[uint64]bool{}, early: map[uint64]bool{},
		toldState: toldState{toldAt: map[uint64]time.Time{}, unheard: map[uint64]unheard{}}}
	if o.clock != nil {
		s.clock = o.clock
	}
	s.groups = newPGGroups()
	if l := o.listener; l != nil {
		s.shared, s.listenDSN = l, l.dsn != dsn
		s.secret = append(s.secret, l.secret...)
		s.groups = l.groupsFor(dsn)
	}
	s.log = o.logger
	s.onChange = func(r *record, own bool) {
		// A new entry, or one resent, elsewhere: the lanes need a look. One this Outbox added
		// or resent itself was indexed, or the lanes marked for a look, by added.
		if r.State == Pending && !own && !ob.indexed(r.ID) {
			ob.dirty.Store(true)
		}
		ob.signal()
	}
	s.gap = func() {
		ob.dirty.Store(true)
		ob.wakeAllWaiters()
		ob.signal()
	}
	s.first, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.fail("connecting", err)
	}
	s.pool.Store(s.first)
	if err := s.setup(ctx); err != nil {
		s.first.Close()
		return nil, err
	}
	if err := s.bindController(ctx, c); err != nil {
		s.first.Close()
		return nil, err
	}
	s.hook.first(1)
	s.since = s.clock().Add(time.Duration(s.offset.Load()) - time.Second) // a second's margin for the clocks' measure
	probe := pgProbeWait
	if o.probeWait != 0 {
		probe = o.probeWait
	}
	if err := s.listen(probe); err != nil {
		s.first.Close()
		return nil, err
	}
	if probe > 0 && !s.listenDSN {
		s.named(ctx, dsn, cfg)
	}
	ob.store = s
	ob.now = func() time.Time { return s.clock().Add(time.Duration(s.offset.Load())) }
	return ob, nil
}

// parseDSN reads dsn as pgx does and returns, beside the pool's configuration, what must be
// taken out of every error: the password as the DSN writes it and as it is sent. Its own error
// says what is wrong without the password.
func parseDSN(dsn string) (*pgxpool.Config, []string, error) {
	secret := dsnSecrets(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// A ParseConfigError's text masks the password as well as it can; its ConnString
		// field does not, so no error of pgx's is wrapped, only its text, redacted again.
		return nil, nil, fmt.Errorf("%w: outbox.OpenPostgres: %s", labelprinter.ErrInvalidArgument, redact(err.Error(), secret))
	}
	if p := cfg.ConnConfig.Password; p != "" {
		secret = append(secret, p, url.QueryEscape(p), url.PathEscape(p), userinfoEscape(p))
	}
	return cfg, secret, nil
}

// checkQueue refuses a queue name that would not survive a listing or a log line.
func checkQueue(q string) error {
	switch {
	case q == "":
		return invalid("OpenPostgres", "empty queue name")
	case len(q) > maxIDLen:
		return invalid("OpenPostgres", "queue name is longer than %d bytes", maxIDLen)
	case !utf8.ValidString(q):
		return invalid("OpenPostgres", "queue name is not valid UTF-8")
	}
	for _, r := range q {
		if unicode.IsControl(r) {
			return invalid("OpenPostgres", "queue name %q contains a control character", q)
		}
	}
	return nil
}

// ownerName names this Outbox in the lanes it holds: the host and process, for a person
// reading the table, and random bits, so no two Outboxes share a name.
func ownerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:10])
}

var (
	dsnKVPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|[^ ]*)`)
)

// dsnSecrets finds the password in a DSN as written, in a URL's userinfo or query or as a
// keyword/value pair, so that it can be taken out of errors even before the DSN is parsed.
func dsnSecrets(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p, url.QueryEscape(p), url.PathEscape(p), userinfoEscape(p))
		}
		for k, vs := range u.Query() {
			if strings.Contains(strings.ToLower(k), "password") {
				for _, v := range vs {
					if v != "" {
						out = append(out, v, url.QueryEscape(v))
					}
				}
			}
		}
	}
	for _, m := range dsnKVPassword.FindAllStringSubmatch(dsn, -1) {
		if v := strings.Trim(m[1], "'"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// userinfoEscape is p as a URL's userinfo writes it.
func userinfoEscape(p string) string {
	return strings.TrimPrefix(url.UserPassword("", p).String(), ":")
}

// redact replaces every secret in s.
func redact(s string, secrets []string) string {
	for _, p := range secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
}

// pgError is an error of the database with the password taken out of its text. It matches
// what the error it stands for matches with errors.Is (context errors among them), but does
// not hand that error out, whose text may carry the DSN.
type pgError struct {
	msg string
	err error
}

func (e *pgError) Error() string { return e.msg }

func (e *pgError) Is(target error) bool { return errors.Is(e.err, target) }

// fail wraps err, a failure of the database while doing what, without the password.
func (s *pgStore) fail(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrWrongState) || errors.Is(err, labelprinter.ErrInvalidArgument) {
		return err // the outbox's own
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		what = "connecting" // whatever was to be done next, nothing of it was
	}
	return &pgError{msg: redact(fmt.Sprintf("outbox: PostgreSQL: %s: %s", what, pgconf.Describe(err, s.sslAsked)), s.secret), err: err}
}

// setup creates the tables on first use and checks their version, under a transaction-scoped
// lock so that Outboxes opening a new database at once do not trip over each other.
func (s *pgStore) setup(ctx context.Context) error {
	err := pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286135)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM labelprinter_outbox_version`).Scan(&v)
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe) && pe.Code == "42P01": // undefined_table: a new database
			return errMissing
		case errors.Is(err, pgx.ErrNoRows):
			return errMissing
		case err != nil:
			return err
		case v > pgSchemaVersion:
			return newerTables(v)
		}
		return nil
	})
	doing := "reading the outbox tables' version"
	if errors.Is(err, errMissing) {
		doing = "creating the outbox tables"
		err = pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286135)`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, pgSchema); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO labelprinter_outbox_version (version) VALUES ($1) ON CONFLICT DO NOTHING`, pgSchemaVersion)
			return err
		})
	}
	var newer newerTables
	if errors.As(err, &newer) {
		return err
	}
	if err == nil && doing != "creating the outbox tables" {
		doing = "adding the index of unsettled entries"
		err = s.addUnsettledIndex(ctx)
	}
	if err == nil {
		doing = "adding the index of final entries"
		err = s.addFinalIndex(ctx)
	}
	if err == nil {
		doing = "adding the acknowledgements"
		err = s.addAcknowledged(ctx)
	}
	if err == nil {
		doing = "adding the counts of final entries"
		err = s.addCounts(ctx)
	}
	if err != nil {
		return s.fail(doing, err)
	}
	// Channels are the database's, not a schema's: the queue's is named for its schema too,
	// so that a queue of the same name in another schema is not heard. The database names it
	// as the trigger does, in the database's encoding.
	if err := s.db().QueryRow(ctx, `SELECT 'lpo_' || md5($1::text || E'\n' || n.nspname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'labelprinter_outbox_entries'::regclass`,
		s.queue).Scan(&s.channel); err != nil {
		return s.fail("naming the queue's channel", err)
	}
	return s.measure(ctx)
}

var errMissing = errors.New("outbox tables missing")

// addUnsettledIndex adds the index of pending, sending and unknown entries to tables made
// before it was part of them (version 1 either way: versions without it read the tables
// as before). It is looked for first, so an open of tables that have it takes no lock.
func (s *pgStore) addUnsettledIndex(ctx context.Context) error {
	var has bool
	if err := s.db().QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_entries_unsettled') IS NOT NULL`).Scan(&has); err != nil || has {
		return err
	}
	return pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286135)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgUnsettledIndex)
		return err
	})
}

// pgUnsettledIndex is the index List reads pending, sending and unknown entries by.
const pgUnsettledIndex = `CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_unsettled ON labelprinter_outbox_entries (queue, seq)
	WHERE state IN ('pending', 'sending', 'unknown') AND pruned IS NULL`

// newerTables is the error for tables of a version newer than this code's.
type newerTables int

func (v newerTables) Error() string {
	return fmt.Sprintf("outbox: the database's outbox tables are of version %d; this version of the outbox reads version %d and leaves them alone: upgrade the program", int(v), pgSchemaVersion)
}

// measure takes the database's clock, so that this host's deadlines follow it.
func (s *pgStore) measure(ctx context.Context) error {
	before := s.clock()
	var db time.Time
	if err := s.db().QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&db); err != nil {
		return s.fail("reading the clock", err)
	}
	s.unanswered.Store(false) // the database answers again
	after := s.clock()
	mid := before.Add(after.Sub(before) / 2)
	s.offset.Store(int64(db.Sub(mid)))
	return nil
}

// scanRecord reads a row of pgCols.
func scanRecord(row pgx.Row) (*record, error) {
	var (
		r        record
		job, res *string
		expire   int64
	)
	if err := row.Scan(&r.Seq, &r.ID, &r.Printer, &r.Kind, &job, &expire, &r.State, &r.Attempts, &r.Enqueued, &r.Updated, &r.Error, &res); err != nil {
		return nil, err
	}
	r.ExpireAfter = time.Duration(expire)
	r.Enqueued, r.Updated = r.Enqueued.UTC(), r.Updated.UTC()
	if job != nil {
		r.Job = json.RawMessage(*job)
	}
	if res != nil {
		r.Response = json.RawMessage(*res)
	}
	return &r, nil
}

func nullable(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

func (s *pgStore) lookup(ctx context.Context, id string) (*record, error) {
	recs, errs := s.lookupEach(ctx, []string{id})
	return recs[0], errs[0]
}

func (s *pgStore) list(ctx context.Context, states []State) ([]*record, error) {
	names := make([]string, len(states))
	for i, st := range states {
		names[i] = string(st)
	}
	q := `SELECT ` + pgCols + ` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND pruned IS NULL AND (cardinality($2::text[]) = 0 OR state = ANY($2)) ORDER BY seq`
	if allIndexed(states) {
		// The partial index's own condition, written out, is what lets the planner use it:
		// the settled entries are not read.
		q = `SELECT ` + pgCols + ` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND state IN ('pending', 'sending', 'unknown') AND pruned IS NULL AND state = ANY($2) ORDER BY seq`
	}
	rows, err := s.db().Query(ctx, q, s.queue, names)
	if err != nil {
		return nil, s.fail("listing", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
	if err != nil {
		return nil, s.fail("listing", err)
	}
	return out, nil
}

// save writes what the rules change of r: its state, attempts, error and answer, with the
// database's time. Each change of an entry has a later Updated than the one before, even
// when its transaction began before that one committed: the listener tells an entry's changes
// by it (pg_listen.go).
func save(ctx context.Context, tx pgx.Tx, queue string, r *record) error {
	return tx.QueryRow(ctx, saveSQL, saveArgs(queue, r)...).Scan(&r.Updated)
}

const saveSQL = `UPDATE labelprinter_outbox_entries SET state = $3, attempts = $4, error = $5,
	response = $6, updated = greatest(now(), updated + interval '1 microsecond') WHERE queue = $1 AND seq = $2 RETURNING updated`

func saveArgs(queue string, r *record) []any {
	return []any{queue, int64(r.Seq), string(r.State), r.Attempts, r.Error, nullable(r.Response)}
}

func (s *pgStore) change(ctx context.Context, id string, _ time.Time, f func(*record) error) (*record, error) {
	var done *record
	err := pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		r, err := scanRecord(tx.QueryRow(ctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
			WHERE queue = $1 AND id = $2 AND pruned IS NULL FOR UPDATE`, s.queue, id))
		if errors.Is(err, pgx.ErrNoRows) {
			_, err := s.lookup(ctx, id) // pruned, or not there
			if err == nil {
				err = fmt.Errorf("%w: %q", ErrNotFound, id)
			}
			return err
		}
		if err != nil {
			return err
		}
		if err := f(r); err != nil {
			return err
		}
		if err := save(ctx, tx, s.queue, r); err != nil {
			return err
		}
		done = r
		return nil
	})
	if err != nil {
		return nil, s.fail("changing "+fmt.Sprintf("%q", id), err)
	}
	s.expect(done)
	return done, nil
}

// expire applies f to those of items still Pending and past their deadline by the
// database's clock.
func (s *pgStore) expire(ctx context.Context, items []*item, _ time.Time, f func(*record) bool) ([]*record, error) {
	seqs := make([]int64, len(items))
	for i, it := range items {
		seqs[i] = int64(it.seq)
	}
	var changed []*record
	err := pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		changed = changed[:0]
		rows, err := tx.Query(ctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
			WHERE queue = $1 AND seq = ANY($2) AND state = 'pending' AND pruned IS NULL
			AND enqueued + expire_after / 1000 * interval '1 microsecond' <= now() ORDER BY seq FOR UPDATE`, s.queue, seqs)
		if err != nil {
			return err
		}
		recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
		if err != nil {
			return err
		}
		for _, r := range recs {
			if !f(r) {
				continue
			}
			if err := save(ctx, tx, s.queue, r); err != nil {
				return err
			}
			changed = append(changed, r)
		}
		return nil
	})
	if err != nil {
		return nil, s.fail("recording expired entries", err)
	}
	s.expect(changed...)
	return changed, nil
}

// begin is the claim, one statement in one round trip, committed on its own: it renews the
// printer's lane if this Outbox still holds its lease, marking it in flight; only then does it
// lock the lane's head entry, and only if the head is it's and Pending does it make the change
// beginRule makes (Sending, one more attempt) and return the entry. nil: the lease is gone or
// another entry comes first; the index is then looked at again. With nothing between its
// statements to wait for, the claim leaves nothing open on the server when its client is cut
// off: it is committed whole or not at all, and a runner that never hears its answer leaves
// the entry Sending, which the lane's next holder makes Unknown, as after a commit whose
// answer was lost.
//
// The rule is f's; the statement writes it in SQL so that the claim takes no second round trip
// for f to see the head, and begin checks that f makes the same of the entry as it was.
func (s *pgStore) begin(ctx context.Context, it *item, _ time.Time, f func(*record) bool) (*record, error) {
	sent := time.Now() // the renewal below counts from here
	rec, held, err := s.claimHead(ctx, it)
	if err == nil && rec != nil {
		err = sameRule(rec, f)
	}
	if err != nil {
		return nil, s.fail(fmt.Sprintf("recording %q as sending", it.id), err)
	}
	if held {
		s.leases.renewed(it.printer, sent)
	} else {
		s.leases.lost(it.printer)
	}
	s.expect(rec)
	return rec, nil
}

// pgClaimHead is the part of a claim that takes the head: h locks the head of the lane's
// open entries, read past the entry $6 (the one whose outcome the statement settles, which
// its snapshot still has Sending; 0 for none), once l, the lane's UPDATE, has renewed the
// lease; c changes the head when it is the claimed entry $3 and still Pending (checked again
// on the row as it is once locked). h reads l, so the lane's row is locked before the
// entries', as take locks them. Parameters: $1 the queue, $2 the printer, $3 the claimed
// entry, $6 the entry settled.
const pgClaimHead = `h AS (
	SELECT seq AS head, state AS head_state FROM labelprinter_outbox_entries
		WHERE queue = $1 AND printer = $2 AND state IN ('pending', 'sending') AND pruned IS NULL AND seq <> $6
		AND EXISTS (SELECT 1 FROM l WHERE held)
		ORDER BY seq LIMIT 1 FOR UPDATE
), c AS (
	UPDATE labelprinter_outbox_entries x SET state = 'sending', attempts = x.attempts + 1,
		updated = greatest(now(), x.updated + interval '1 microsecond')
		FROM h WHERE x.queue = $1 AND x.seq = h.head AND h.head = $3 AND h.head_state = 'pending' AND x.state = 'pending'
		RETURNING x.seq, x.id, x.printer, x.kind, x.job, x.expire_after, x.state, x.attempts, x.enqueued, x.updated, x.error, x.response
)`

// claimSQL is begin's statement: the lane renewed while this Outbox ($4) holds its lease,
// for $5 µs, and marked in flight, then pgClaimHead. It returns one row: whether the lane was
// renewed, and the entry as c left it (NULLs when c changed nothing).
const claimSQL = `WITH l AS (
	UPDATE labelprinter_outbox_lanes SET in_flight = $3, lease_until = now() + $5 * interval '1 microsecond'
		WHERE queue = $1 AND printer = $2 AND owner = $4 AND lease_until > now() RETURNING true AS held
), ` + pgClaimHead + `
SELECT EXISTS (SELECT 1 FROM l), c.* FROM (VALUES (1)) AS one (n) LEFT JOIN c ON true`

// claimHead runs claimSQL for it.
func (s *pgStore) claimHead(ctx context.Context, it *item) (rec *record, held bool, err error) {
	var c claimed
	err = s.db().QueryRow(ctx, claimSQL, s.queue, it.printer, int64(it.seq), s.owner, s.ttl.Microseconds(), int64(0)).
		Scan(append([]any{&held}, c.dest()...)...)
	if err != nil {
		return nil, held, err
	}
	return c.record(), held, nil
}

// claimed is what pgClaimHead's c returns, NULLs when it changed nothing.
type claimed struct {
	seq, expire         *int64
	id, printer, kind   *string
	job, state, errText *string
	res                 *string
	attempts            *int
	enqueued, updated   *time.Time
}

func (c *claimed) dest() []any {
	return []any{&c.seq, &c.id, &c.printer, &c.kind, &c.job, &c.expire, &c.state, &c.attempts, &c.enqueued, &c.updated, &c.errText, &c.res}
}

// record is the entry claimed, or nil.
func (c *claimed) record() *record {
	if c.seq == nil {
		return nil
	}
	r := &record{Seq: uint64(*c.seq), ID: *c.id, Printer: *c.printer, Kind: *c.kind, ExpireAfter: time.Duration(*c.expire),
		State: State(*c.state), Attempts: *c.attempts, Enqueued: c.enqueued.UTC(), Updated: c.updated.UTC(), Error: *c.errText}
	if c.job != nil {
		r.Job = json.RawMessage(*c.job)
	}
	if c.res != nil {
		r.Response = json.RawMessage(*c.res)
	}
	return r
}

// sameRule checks that f, given the entry as the claim found it (Pending, one attempt fewer),
// makes of it what the claim's SQL made: the rule has one home, f, and a claim that drifted
// from it is an error, not a delivery.
func sameRule(claimed *record, f func(*record) bool) error {
	was := *claimed
	was.State, was.Attempts = Pending, claimed.Attempts-1
	if !f(&was) || was.State != claimed.State || was.Attempts != claimed.Attempts || was.Error != claimed.Error {
		return fmt.Errorf("the claim made %q %s after %d attempts; its rule makes it %s after %d", claimed.ID, claimed.State, claimed.Attempts, was.State, was.Attempts)
	}
	return nil
}

// laneLease returns the lease of printer's lane when this Outbox holds it for certain now.
func (s *pgStore) laneLease(printer string) *fence.Lease { return s.leases.lease(printer) }

// finish commits the outcome of an entry begin returned, if it is still Sending from that
// attempt: a Run that took the lane over meanwhile has made it Unknown, which stays, and an
// entry a person resent since is another attempt's, which this answer is not.
func (s *pgStore) finish(ctx context.Context, r *record) error {
	// One statement, so one round trip: the lane is let go only when the entry changed.
	err := s.db().QueryRow(ctx, `WITH e AS (UPDATE labelprinter_outbox_entries SET state = $3, error = $4, response = $5, updated = now()
			WHERE queue = $1 AND seq = $2 AND state = 'sending' AND attempts = $6 RETURNING updated),
		l AS (UPDATE labelprinter_outbox_lanes SET in_flight = NULL
			WHERE queue = $1 AND printer = $7 AND owner = $8 AND in_flight = $2 AND EXISTS (SELECT 1 FROM e))
		SELECT updated FROM e`,
		s.queue, int64(r.Seq), string(r.State), r.Error, nullable(r.Response), r.Attempts, r.Printer, s.owner).Scan(&r.Updated)
	if errors.Is(err, pgx.ErrNoRows) {
		err = errLateOutcome
	}
	if errors.Is(err, errLateOutcome) {
		return err
	}
	if err == nil {
		s.expect(r)
	}
	return s.fail(fmt.Sprintf("recording the outcome of %q (%s)", r.ID, r.State), err)
}

// finishBegin commits the outcome r as finish does and, in the same statement and round trip,
// claims next as begin does: only when the outcome was committed, the lane's row still has r
// in flight, and its lease is live, which renews it from this send. A lane whose lease ran out
// is let go as finish lets it go, and next is left for begin.
func (s *pgStore) finishBegin(ctx context.Context, r *record, next *item, f func(*record) bool) (rec *record, claimErr, err error) {
	sent := time.Now() // the renewal below counts from here
	var (
		held *bool
		c    claimed
	)
	err = s.db().QueryRow(ctx, finishClaimSQL, s.queue, r.Printer, int64(next.seq), s.owner, s.ttl.Microseconds(),
		int64(r.Seq), string(r.State), r.Error, nullable(r.Response), r.Attempts).
		Scan(append([]any{&r.Updated, &held}, c.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, errLateOutcome
	}
	if err != nil {
		return nil, nil, s.fail(fmt.Sprintf("recording the outcome of %q (%s) and claiming %q", r.ID, r.State, next.id), err)
	}
	s.expect(r)
	if held != nil && *held {
		s.leases.renewed(next.printer, sent)
	}
	rec = c.record()
	if rec == nil {
		return nil, nil, nil
	}
	s.expect(rec)
	if err := sameRule(rec, f); err != nil {
		return nil, s.fail(fmt.Sprintf("recording %q as sending", next.id), err), nil
	}
	return rec, nil, nil
}

// finishClaimSQL is finishBegin's statement: finish's (e, the outcome of entry $6 from its
// attempt $10; l, the lane's in_flight let go, or set to the next entry $3 with the lease
// renewed while it is live), then pgClaimHead for the next entry. e's row is changed before
// c's, as l reads e and h reads l, so the listener hears the outcome before the next claim.
// It returns no row when the outcome came too late; otherwise e's time, whether the lease was
// renewed (NULL: the lane's row did not have the entry in flight) and c's entry.
const finishClaimSQL = `WITH e AS (
	UPDATE labelprinter_outbox_entries SET state = $7, error = $8, response = $9, updated = now()
		WHERE queue = $1 AND seq = $6 AND state = 'sending' AND attempts = $10 RETURNING updated
), l AS (
	UPDATE labelprinter_outbox_lanes SET in_flight = CASE WHEN lease_until > now() THEN $3::bigint END,
		lease_until = CASE WHEN lease_until > now() THEN now() + $5 * interval '1 microsecond' ELSE lease_until END
		WHERE queue = $1 AND printer = $2 AND owner = $4 AND in_flight = $6 AND EXISTS (SELECT 1 FROM e)
		RETURNING in_flight IS NOT NULL AS held
), ` + pgClaimHead + `
SELECT e.updated, (SELECT held FROM l), c.* FROM e LEFT JOIN c ON true`

func finalNames() []string {
	var out []string
	for _, st := range []State{Pending, Sending, Sent, Rejected, Unknown, Expired, Cancelled} {
		if st.final() {
			out = append(out, string(st))
		}
	}
	return out
}

// prune marks the final entries last changed more than olderThan ago (by the database's
// clock) as pruned: their job and answer go, their ID, state and times stay.
func (s *pgStore) prune(ctx context.Context, _ time.Time, olderThan time.Duration) (int, error) {
	tag, err := s.db().Exec(ctx, `UPDATE labelprinter_outbox_entries SET pruned = now(), job = NULL, response = NULL
		WHERE queue = $1 AND pruned IS NULL AND state = ANY($2) AND updated < now() - $3 * interval '1 microsecond'`,
		s.queue, finalNames(), olderThan.Microseconds())
	if err != nil {
		return 0, s.fail("pruning", err)
	}
	return int(tag.RowsAffected()), nil
}

func (s *pgStore) forget(ctx context.Context, _ time.Time, olderThan time.Duration) (int, error) {
	tag, err := s.db().Exec(ctx, `DELETE FROM labelprinter_outbox_entries
		WHERE queue = $1 AND pruned IS NOT NULL AND pruned < now() - $2 * interval '1 microsecond'`,
		s.queue, olderThan.Microseconds())
	if err != nil {
		return 0, s.fail("forgetting pruned IDs", err)
	}
	return int(tag.RowsAffected()), nil
}

// poll is how often a Run looks at the lanes: to renew its leases (four times or more per
// lease) and to take over lanes whose holder's lease ran out.
func (s *pgStore) poll() time.Duration { return min(s.ttl/4, time.Second) }

// laneState is what sync found: the lanes this Outbox holds, their Pending entries in
// sequence order, and the entries it turned Unknown.
type laneState struct {
	held    []string
	pending []*record
	unknown []*record
	// uncertain: a lane is held whose acquire or renewal came back after its deadline; it is
	// renewed at once, and not acted on until then.
	uncertain bool
}

// sync renews this Outbox's leases, takes the lanes with work whose lease is free or ran out
// (turning what their holder left Sending into Unknown), turns Unknown what this Outbox left
// Sending in its own lanes without a request on its way (inFlight says which are), and reads
// the Pending entries of the lanes it holds.
func (s *pgStore) sync(ctx context.Context, inFlight func(seq uint64) bool) (laneState, error) {
	var st laneState
	if err := s.measure(ctx); err != nil {
		return st, err
	}
	// The lease counts from when its renewal was sent: the database may run it later.
	sent := time.Now()
	rows, err := s.db().Query(ctx, `UPDATE labelprinter_outbox_lanes SET lease_until = now() + $3 * interval '1 microsecond'
		WHERE queue = $1 AND owner = $2 AND lease_until > now() RETURNING printer`, s.queue, s.owner, s.ttl.Microseconds())
	if err != nil {
		return st, s.fail("renewing leases", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return st, s.fail("renewing leases", err)
	}
	renewed := map[string]bool{}
	for _, p := range held {
		renewed[p] = true
		if !s.leases.renewed(p, sent) {
			st.uncertain = true
		}
	}
	s.leases.keep(renewed) // a lane the renewal did not find is lost: nothing more leaves for it
	rows, err = s.db().Query(ctx, `SELECT DISTINCT e.printer FROM labelprinter_outbox_entries e
		WHERE e.queue = $1 AND e.state IN ('pending', 'sending') AND e.pruned IS NULL
		AND NOT EXISTS (SELECT 1 FROM labelprinter_outbox_lanes l WHERE l.queue = e.queue AND l.printer = e.printer
			AND l.owner <> '' AND l.lease_until > now())`, s.queue)
	if err != nil {
		return st, s.fail("looking for lanes", err)
	}
	free, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return st, s.fail("looking for lanes", err)
	}
	for _, p := range free {
		sent := time.Now()
		unknown, ok, err := s.take(ctx, p, inFlight)
		if err != nil {
			return st, err
		}
		if ok {
			held = append(held, p)
			st.unknown = append(st.unknown, unknown...)
			if !s.leases.renewed(p, sent) {
				st.uncertain = true
			}
		}
	}
	st.held = held
	if len(held) == 0 {
		return st, nil
	}
	// What this Outbox left Sending: a delivery whose outcome could not be committed.
	rows, err = s.db().Query(ctx, `SELECT seq, printer FROM labelprinter_outbox_entries
		WHERE queue = $1 AND state = 'sending' AND printer = ANY($2)`, s.queue, held)
	if err != nil {
		return st, s.fail("looking for entries left sending", err)
	}
	type left struct {
		Seq     int64
		Printer string
	}
	sending, err := pgx.CollectRows(rows, pgx.RowToStructByPos[left])
	if err != nil {
		return st, s.fail("looking for entries left sending", err)
	}
	for _, l := range sending {
		if inFlight(uint64(l.Seq)) {
			continue
		}
		recs, err := s.orphan(ctx, l.Printer, l.Seq)
		if err != nil {
			return st, err
		}
		st.unknown = append(st.unknown, recs...)
	}
	rows, err = s.db().Query(ctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND state = 'pending' AND pruned IS NULL AND printer = ANY($2) ORDER BY seq`, s.queue, held)
	if err != nil {
		return st, s.fail("reading pending entries", err)
	}
	st.pending, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
	if err != nil {
		return st, s.fail("reading pending entries", err)
	}
	return st, nil
}

// take takes printer's lane if its lease is free or ran out, turning the entries its last
// holder left Sending into Unknown in the same transaction. A lane whose row or Sending
// entries another transaction has locked is left for the next look: that transaction may be
// a process frozen in the middle of it, and waiting for it would hold up every other lane.
//
// A lane whose lease this Outbox itself let lapse, and that nobody took since, keeps the
// entries whose request this Outbox has on its way (inFlight) Sending: no one else delivered
// the lane meanwhile, and their answers come here.
func (s *pgStore) take(ctx context.Context, printer string, inFlight func(seq uint64) bool) (unknown []*record, ok bool, err error) {
	err = pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		unknown, ok = nil, false
		if _, err := tx.Exec(ctx, `INSERT INTO labelprinter_outbox_lanes (queue, printer) VALUES ($1, $2)
			ON CONFLICT DO NOTHING`, s.queue, printer); err != nil {
			return err
		}
		var owner string
		var live bool
		err := tx.QueryRow(ctx, `SELECT owner, lease_until > now() FROM labelprinter_outbox_lanes
			WHERE queue = $1 AND printer = $2 FOR UPDATE SKIP LOCKED`, s.queue, printer).Scan(&owner, &live)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // locked by another transaction
		}
		if err != nil {
			return err
		}
		if owner != "" && live {
			return nil // another Run's, after all
		}
		rows, err := tx.Query(ctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
			WHERE queue = $1 AND printer = $2 AND state = 'sending' ORDER BY seq FOR UPDATE NOWAIT`, s.queue, printer)
		var recs []*record
		if err == nil {
			recs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
		}
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available
			return errLaneBusy
		}
		if err != nil {
			return err
		}
		for _, r := range recs {
			if owner == s.owner && inFlight(r.Seq) {
				continue
			}
			leaseRanOut(r)
			if err := save(ctx, tx, s.queue, r); err != nil {
				return err
			}
			unknown = append(unknown, r)
		}
		if _, err := tx.Exec(ctx, `UPDATE labelprinter_outbox_lanes SET owner = $3, in_flight = CASE WHEN owner = $3 THEN in_flight END,
			lease_until = now() + $4 * interval '1 microsecond' WHERE queue = $1 AND printer = $2`,
			s.queue, printer, s.owner, s.ttl.Microseconds()); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if errors.Is(err, errLaneBusy) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail(fmt.Sprintf("taking the lane of printer %q", printer), err)
	}
	s.expect(unknown...)
	return unknown, ok, nil
}

// errLaneBusy ends a take whose entries another transaction has locked.
var errLaneBusy = errors.New("the lane's entries are locked by another transaction")

// orphan turns entry seq, which this Outbox left Sending in a lane it holds, into Unknown.
func (s *pgStore) orphan(ctx context.Context, printer string, seq int64) ([]*record, error) {
	var out []*record
	err := pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		out = nil
		tag, err := tx.Exec(ctx, `UPDATE labelprinter_outbox_lanes SET in_flight = NULL
			WHERE queue = $1 AND printer = $2 AND owner = $3 AND lease_until > now()`, s.queue, printer, s.owner)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		r, err := scanRecord(tx.QueryRow(ctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
			WHERE queue = $1 AND seq = $2 AND state = 'sending' FOR UPDATE`, s.queue, seq))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		orphaned(r, r.Updated)
		if err := save(ctx, tx, s.queue, r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err == nil {
		s.expect(out...)
	}
	return out, s.fail("recording an entry left sending as unknown", err)
}

// release gives up every lease this Outbox holds, so that another Run may take the lanes at
// once.
func (s *pgStore) release(ctx context.Context) error {
	s.leases.leaveAll()
	_, err := s.db().Exec(ctx, `UPDATE labelprinter_outbox_lanes SET owner = '', lease_until = '-infinity'
		WHERE queue = $1 AND owner = $2`, s.queue, s.owner)
	if err != nil && ctx.Err() != nil {
		s.unanswered.Store(true) // Close's flush would wait for it in vain
	}
	return s.fail("giving up leases", err)
}

func (s *pgStore) close() error {
	s.leases.leaveAll()
	s.stopL()
	<-s.lDone
	if p := s.db(); p != s.first {
		pgconf.Close(p, poolCloseWait/2)
		pgconf.Close(s.first, poolCloseWait/2)
	} else {
		pgconf.Close(p, poolCloseWait)
	}
	return nil
}

// db is the pool the store's statements go through now.
func (s *pgStore) db() *pgxpool.Pool { return s.pool.Load() }

// poolCloseWait bounds how long Close waits for the pool's connections to close: a server
// that does not answer must not hold up Close.
const poolCloseWait = time.Second
