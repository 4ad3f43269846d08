package mqttbridge

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labelprinter/go-labelprinter/internal/fence"
	"github.com/labelprinter/go-labelprinter/internal/group"
	"github.com/labelprinter/go-labelprinter/internal/pgconf"
	"github.com/labelprinter/go-labelprinter/internal/secretfile"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// A pair of bridges (outbox.postgres in the configuration) shares one PostgreSQL database:
// the outboxes (one queue per controller, named by queueName), the ledger (ledgerTable, keyed
// by the same queue) and the bridge lease (leaseTable, keyed by broker.client_id). Only the
// holder of the lease connects to the broker, since a second connection with the client id
// would take the persistent session over. The lease is a row (owner, expiry by the database's
// now()), renewed every quarter of its TTL, as the outbox's lanes are: no advisory lock, so a
// transaction-mode pooler in between does not break it. Every ledger write checks, in its own
// statement, that the lease is still held; and the holder itself stops taking commands, and
// leaves the broker, before the lease can have run out by the database's clock: its own
// deadline counts from when each renewal was sent (internal/fence), and a request it makes to
// a printer on behalf of the lease (an abortPrint, the SDK's retries included) runs under that
// deadline. The outboxes fence their own requests by their lanes' leases.

// ErrLeaseLost is what Run returns when the bridge lost its lease (it could not renew it in
// time, or another bridge holds it): it left the broker at once and executed nothing after.
var ErrLeaseLost = errors.New("mqttbridge: the bridge lease was lost; this bridge stopped acting and left the broker")

const pairSchema = `
CREATE TABLE IF NOT EXISTS labelprinter_mqtt_bridges (
	client_id text PRIMARY KEY,
	owner text NOT NULL DEFAULT '',
	lease_until timestamptz NOT NULL DEFAULT '-infinity'
);
CREATE TABLE IF NOT EXISTS labelprinter_mqtt_ledger (
	queue text NOT NULL,
	kind text NOT NULL,
	printer text NOT NULL,
	id text NOT NULL,
	record jsonb NOT NULL,
	PRIMARY KEY (queue, kind, printer, id)
);
`

// pgTimeout bounds one statement of the lease or the ledger.
const pgTimeout = 5 * time.Second

// pair is a bridge's share of the database: its lease and the ledgers.
type pair struct {
	// pool is the pair's pool: at first one whose statements keep nothing in their sessions,
	// then, once the outboxes found that the DSN reaches the server's own sessions, one that
	// prepares them (named). first is the one opened first, closed with it.
	pool     atomic.Pointer[pgxpool.Pool]
	first    *pgxpool.Pool
	poolCfg  *pgxpool.Config
	dsn      string // with the password of password_file, for the outboxes
	listen   string // outbox.postgres.listen_dsn, with that password too; "" without
	secret   []string
	clientID string
	owner    string
	ttl      time.Duration
	now      func() time.Time

	tombs *group.Group[*tombRead] // the reads of cancels' tombstones, in batches (pair_tombstones.go)

	mu    sync.Mutex
	lease *fence.Lease // from the first acquire or renewal that came back in time; nil before
}

// openPair connects to the database of cfg.Outbox.Postgres and creates the tables on first
// use. Its errors never carry the password.
func openPair(ctx context.Context, cfg *Config) (*pair, error) {
	pg := cfg.Outbox.Postgres
	dsn, listen := pg.DSN, pg.ListenDSN
	var secret []string
	if pg.PasswordFile != "" {
		pw, err := secretfile.Read(pg.PasswordFile)
		if err != nil {
			return nil, &ConfigError{Field: "outbox.postgres.password_file", Err: err}
		}
		secret = append(secret, string(pw), url.QueryEscape(string(pw)), url.PathEscape(string(pw)))
		dsn = secretfile.WithPassword(dsn, string(pw))
		if listen != "" {
			listen = secretfile.WithPassword(listen, string(pw))
		}
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fieldErr("outbox.postgres.dsn", "not a PostgreSQL URL or keyword/value connection string")
	}
	if p := pc.ConnConfig.Password; p != "" {
		secret = append(secret, p, url.QueryEscape(p), url.PathEscape(p))
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = pgTimeout
	}
	pc.MaxConns = 4
	pgconf.NoSessionStatements(pc, dsn)
	host, _ := os.Hostname()
	p := &pair{dsn: dsn, listen: listen, secret: secret, clientID: cfg.Broker.ClientID, ttl: cfg.Outbox.LeaseTTL, now: time.Now,
		owner: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:10])}
	p.tombs = newTombReads(p)
	if p.first, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
		return nil, p.fail("connecting", err)
	}
	p.pool.Store(p.first)
	p.poolCfg = pc
	err = pgx.BeginTxFunc(ctx, p.db(), pgconf.AbandonAfter(p.ttl).TxOptions(), func(tx pgx.Tx) error {
		// Transaction-scoped: bridges creating the tables at once wait for each other.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286136)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pairSchema)
		return err
	})
	if err != nil {
		p.first.Close()
		return nil, p.fail("creating the bridge tables", err)
	}
	return p, nil
}

// fail wraps a database error without the password.
func (p *pair) fail(what string, err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		what = "connecting" // whatever was to be done next, nothing of it was
	}
	msg := fmt.Sprintf("mqttbridge: PostgreSQL: %s: %s", what, pgconf.Describe(err, pgconf.SSLModeAsked(p.dsn)))
	for _, s := range p.secret {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return errors.New(msg)
}

// close closes the pool, waiting at most a second: a database that does not answer must not
// hold up the end of Run (a lease not given up runs out on its own).
func (p *pair) close() {
	if n := p.db(); n != p.first {
		pgconf.Close(n, time.Second/2)
	}
	pgconf.Close(p.first, time.Second/2)
}

// db is the pool the pair's statements go through now.
func (p *pair) db() *pgxpool.Pool { return p.pool.Load() }

// named switches the pair to a pool that prepares each statement once per connection, so that
// the server no longer parses and plans it on every call. Called once the outboxes have opened
// on the DSN with no listen DSN: each heard its own notification through it, so it reaches
// sessions of the server's own, which keep what is prepared in them, and not a pooler in
// transaction mode. A DSN that chooses default_query_exec_mode itself keeps it; a pool that
// cannot be made leaves the first in use.
func (p *pair) named(ctx context.Context) {
	if strings.Contains(p.dsn, "default_query_exec_mode") || p.db() != p.first {
		return
	}
	cfg := p.poolCfg.Copy()
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	if n, err := pgxpool.NewWithConfig(ctx, cfg); err == nil {
		p.pool.Store(n)
	}
}

// acquire takes the lease if it is free or ran out. It returns whether this bridge now holds
// it, and otherwise who does and how long its lease still runs by the database's clock. A lease
// taken by an answer that came back too late to be certain of (fence.Start) is held, but
// p.lease stays nil: confirm renews it before the bridge acts.
func (p *pair) acquire(ctx context.Context) (held bool, owner string, left time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	sent := p.now()
	err = pgx.BeginTxFunc(ctx, p.db(), pgconf.AbandonAfter(p.ttl).TxOptions(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO labelprinter_mqtt_bridges (client_id) VALUES ($1) ON CONFLICT DO NOTHING`, p.clientID); err != nil {
			return err
		}
		var us int64
		if err := tx.QueryRow(ctx, `SELECT owner, GREATEST(0, EXTRACT(EPOCH FROM GREATEST(lease_until, now()) - now()) * 1000000)::bigint
			FROM labelprinter_mqtt_bridges WHERE client_id = $1 FOR UPDATE`, p.clientID).Scan(&owner, &us); err != nil {
			return err
		}
		if owner != "" && us > 0 {
			left = time.Duration(us) * time.Microsecond
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE labelprinter_mqtt_bridges SET owner = $2, lease_until = now() + $3 * interval '1 microsecond'
			WHERE client_id = $1`, p.clientID, p.owner, p.ttl.Microseconds())
		held = err == nil
		return err
	})
	if err != nil {
		return false, "", 0, p.fail("taking the bridge lease", err)
	}
	if held {
		p.setLease(fence.Start(p.ttl, sent))
	}
	return held, owner, left, nil
}

func (p *pair) setLease(l *fence.Lease) {
	p.mu.Lock()
	p.lease = l
	p.mu.Unlock()
}

func (p *pair) current() *fence.Lease {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lease
}

// extend runs the statement that renews the lease this bridge holds, within wait, and returns
// when it was sent; held is false when the row names another owner or the lease ran out.
func (p *pair) extend(ctx context.Context, wait time.Duration) (sent time.Time, held bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	sent = p.now()
	tag, err := p.db().Exec(ctx, `UPDATE labelprinter_mqtt_bridges SET lease_until = now() + $3 * interval '1 microsecond'
		WHERE client_id = $1 AND owner = $2 AND lease_until > now()`, p.clientID, p.owner, p.ttl.Microseconds())
	if err != nil {
		return sent, true, p.fail("renewing the bridge lease", err)
	}
	return sent, tag.RowsAffected() == 1, nil
}

// confirm renews, at once and again until one comes back in time, a lease that acquire took
// from an answer too late to be certain of (the database stalled): the bridge acts only once
// it is certain. false when the lease turned out to be lost (it ran out by the database's
// clock before a renewal reached it): the bridge stands by again, as it did before.
func (p *pair) confirm(ctx context.Context, log func(msg string, args ...any)) (bool, error) {
	for p.current() == nil {
		// An answer later than 4/5 of the TTL is of no use: it cannot make the lease certain.
		sent, held, err := p.extend(ctx, min(pgTimeout, fence.Span(p.ttl)))
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case err != nil:
			log("renewing the bridge lease taken from a late answer failed; trying again", "err", err)
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(p.ttl / 4):
			}
		case !held:
			return false, nil
		default:
			p.setLease(fence.Start(p.ttl, sent))
		}
	}
	return true, nil
}

// renew extends the lease this bridge holds; false when it no longer holds it.
func (p *pair) renew(ctx context.Context) (bool, error) {
	l := p.current()
	// A renewal that hangs (the database paused) must not hold up the fencing at the deadline.
	wait := min(p.ttl/4, time.Until(l.Deadline()))
	if wait <= 0 {
		return true, errors.New("mqttbridge: no time left to renew the bridge lease")
	}
	sent, held, err := p.extend(ctx, wait)
	if err != nil || !held {
		return held, err
	}
	l.Renewed(sent)
	return true, nil
}

// held reports whether the lease is certainly still held: commands are executed only then.
func (p *pair) held() bool {
	l := p.current()
	return l != nil && l.Held()
}

// bound returns a context for a request this bridge makes to a printer on behalf of its lease
// (an abortPrint): it ends with the lease, and nothing of the request leaves after the
// lease's deadline (internal/fence). The Call is nil, and the context ended, before the lease
// was ever certain.
func (p *pair) bound(parent context.Context) (context.Context, *fence.Call) {
	l := p.current()
	if l == nil {
		ctx, cancel := context.WithCancelCause(parent)
		cancel(ErrLeaseLost)
		return ctx, nil
	}
	return l.Bound(parent)
}

// release gives the lease up, so that a standby takes over at once.
func (p *pair) release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	_, err := p.db().Exec(ctx, `UPDATE labelprinter_mqtt_bridges SET owner = '', lease_until = '-infinity'
		WHERE client_id = $1 AND owner = $2`, p.clientID, p.owner)
	if err != nil {
		return p.fail("giving up the bridge lease", err)
	}
	return nil
}

// keep renews the lease every quarter of its TTL until ctx ends, and calls lost (once) as
// soon as the lease is not certainly held any more: another bridge holds it, or no renewal
// succeeded before the deadline. Either ends the lease, and with it every request made under
// it (bound).
func (p *pair) keep(ctx context.Context, log func(msg string, args ...any), lost func()) {
	l := p.current()
	tick := time.NewTicker(p.ttl / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.Done():
			log("the bridge lease could not be renewed in time; leaving the broker")
			lost()
			return
		case <-tick.C:
			ok, err := p.renew(ctx)
			if err != nil {
				log("renewing the bridge lease failed", "err", err)
			}
			if !ok {
				l.Lose(ErrLeaseLost)
				log("another bridge holds the lease now; leaving the broker")
				lost()
				return
			}
		}
	}
}

// pgLedger is the ledger of one controller of a pair, in the database, under its queue name:
// the same records as the file ledger, so that a bridge taking over answers a redelivered
// abortPrint, and a job cancelled before it came, from what the one before it recorded. Writes
// succeed only while this bridge holds the lease.
type pgLedger struct {
	p     *pair
	queue string
}

// openLedger of a pair: only the lease holder opens it, so an abortPrint found sending was
// cut off by the end (or the fencing) of the bridge that sent it: it becomes unknown.
func (p *pair) openLedger(ctx context.Context, queue string) (*pgLedger, error) {
	l := &pgLedger{p: p, queue: queue}
	ctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	cut, _ := json.Marshal(map[string]any{
		"state": StateUnknown,
		// Whether it stopped or was cut off from the database, the bridge that sent it lost
		// its lease with it out; its fence stops it from ever sending it later.
		"error": "the bridge sending the abortPrint lost its lease (it stopped, or was cut off from the database) while it was out; it may or may not have reached the printer, and is never sent again",
		"time":  time.Now().UTC(),
	})
	_, err := p.db().Exec(ctx, `UPDATE labelprinter_mqtt_ledger SET record = record || $2::jsonb
		WHERE queue = $1 AND kind = 'abort' AND record->>'state' = 'sending'`, queue, string(cut))
	if err == nil {
		// Earlier versions kept cancels and resends by packet identifier; nothing reads them.
		_, err = p.db().Exec(ctx, `DELETE FROM labelprinter_mqtt_ledger WHERE queue = $1 AND kind = 'delivery'`, queue)
	}
	if err == nil {
		// The reports are kept from the first start that knows them, by the database's clock,
		// which stamps the entries too.
		_, err = p.db().Exec(ctx, `INSERT INTO labelprinter_mqtt_ledger (queue, kind, printer, id, record)
			VALUES ($1, 'reports-since', '', '', jsonb_build_object('since', now())) ON CONFLICT DO NOTHING`, queue)
	}
	if err != nil {
		return nil, p.fail("reading the ledger", err)
	}
	return l, nil
}

func (l *pgLedger) get(kind, printer, id string, v any) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	var b []byte
	err := l.p.db().QueryRow(ctx, `SELECT record FROM labelprinter_mqtt_ledger
		WHERE queue = $1 AND kind = $2 AND printer = $3 AND id = $4`, l.queue, kind, printer, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, l.p.fail("reading the ledger", err)
	}
	return true, json.Unmarshal(b, v)
}

// put writes a record, in a statement that checks the lease is still held.
func (l *pgLedger) put(kind, printer, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !l.p.held() {
		return ErrLeaseLost
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	tag, err := l.p.db().Exec(ctx, `INSERT INTO labelprinter_mqtt_ledger (queue, kind, printer, id, record)
		SELECT $1, $2, $3, $4, $5::jsonb FROM labelprinter_mqtt_bridges
		WHERE client_id = $6 AND owner = $7 AND lease_until > now()
		ON CONFLICT (queue, kind, printer, id) DO UPDATE SET record = EXCLUDED.record`,
		l.queue, kind, printer, id, string(b), l.p.clientID, l.p.owner)
	if err != nil {
		return l.p.fail("writing the ledger", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrLeaseLost
	}
	return nil
}

func (l *pgLedger) abort(printer, id string) (*abortRecord, error) {
	r := new(abortRecord)
	ok, err := l.get("abort", printer, id, r)
	if !ok || err != nil {
		return nil, err
	}
	return r, nil
}

func (l *pgLedger) putAbort(r abortRecord) error { return l.put("abort", r.Printer, r.ID, r) }

func (l *pgLedger) putCancel(r cancelRecord) error { return l.put("cancel", r.Printer, r.ID, r) }

func (l *pgLedger) reports() (map[string]string, time.Time, error) {
	var meta struct {
		Since time.Time `json:"since"`
	}
	if _, err := l.get("reports-since", "", "", &meta); err != nil {
		return nil, time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	rows, err := l.p.db().Query(ctx, `SELECT id, record->>'mark' FROM labelprinter_mqtt_ledger
		WHERE queue = $1 AND kind = 'report'`, l.queue)
	if err != nil {
		return nil, time.Time{}, l.p.fail("reading the ledger", err)
	}
	marks := map[string]string{}
	var id, mark string
	_, err = pgx.ForEachRow(rows, []any{&id, &mark}, func() error {
		marks[id] = mark
		return nil
	})
	if err != nil {
		return nil, time.Time{}, l.p.fail("reading the ledger", err)
	}
	return marks, meta.Since, nil
}

// putReports writes the marks in one statement that checks the lease is still held.
func (l *pgLedger) putReports(marks map[string]string) error {
	if !l.p.held() {
		return ErrLeaseLost
	}
	ids, ms := make([]string, 0, len(marks)), make([]string, 0, len(marks))
	for id, m := range marks {
		ids, ms = append(ids, id), append(ms, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	tag, err := l.p.db().Exec(ctx, `INSERT INTO labelprinter_mqtt_ledger (queue, kind, printer, id, record)
		SELECT $1, 'report', '', u.id, jsonb_build_object('mark', u.mark)
		FROM unnest($2::text[], $3::text[]) AS u(id, mark), labelprinter_mqtt_bridges b
		WHERE b.client_id = $4 AND b.owner = $5 AND b.lease_until > now()
		ON CONFLICT (queue, kind, printer, id) DO UPDATE SET record = EXCLUDED.record`,
		l.queue, ids, ms, l.p.clientID, l.p.owner)
	if err != nil {
		return l.p.fail("writing the ledger", err)
	}
	if tag.RowsAffected() == 0 && len(ids) > 0 {
		return ErrLeaseLost
	}
	return nil
}

// dropReports forgets the marks of ids, 1,000 to a statement, each bounded by pgTimeout: the
// first start of a version whose queue keeps the marks lets go of every mark the ledger held.
func (l *pgLedger) dropReports(ids []string) error {
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
		_, err := l.p.db().Exec(ctx, `DELETE FROM labelprinter_mqtt_ledger WHERE queue = $1 AND kind = 'report' AND id = ANY($2)`, l.queue, ids[:n])
		cancel()
		if err != nil {
			return l.p.fail("writing the ledger", err)
		}
		ids = ids[n:]
	}
	return nil
}

// outboxMarks: a queue in PostgreSQL keeps the marks (outbox.Acknowledge), so a start reads
// the entries not marked alone, and the ledger only the marks the queue could not take; while
// this bridge holds the lease. A bridge that lost it marks nothing, in the queue or the
// ledger (ErrLeaseLost), and waits on no database that may not answer: the next bridge
// publishes those results again.
func (l *pgLedger) outboxMarks() bool { return l.p.held() }

func (l *pgLedger) close() error { return nil }

// runPair stands by until this bridge holds the lease, opens the shared outboxes and ledgers,
// and bridges while it keeps the lease: until ctx ends (it then gives the lease up, so a
// standby takes over at once) or the lease is lost (ErrLeaseLost).
func (b *Bridge) runPair(ctx context.Context) error {
	p := b.pair
	said := ""
	for {
		held, owner, left, err := p.acquire(ctx)
		switch {
		case err != nil:
			b.log.Warn("cannot reach the database for the bridge lease; standing by", "err", err)
			left = p.ttl / 4
		case held:
		case owner != said:
			said = owner
			b.log.Info("another bridge is active; standing by, not connected to the broker",
				"client_id", p.clientID, "active", owner, "lease_left", left.Round(time.Millisecond))
		}
		if held && p.current() == nil {
			// The answer came too late to be certain of: the lease may run out by the
			// database's clock before this host's deadline. Not acting, and not exiting:
			// renewed at once, it is certain once a renewal comes back in time.
			b.log.Info("took the bridge lease from a late answer; renewing it before acting", "client_id", p.clientID)
			if held, err = p.confirm(ctx, b.log.Warn); err != nil {
				b.closeOutboxes()
				return nil // ctx ended
			}
			if !held {
				b.log.Info("the bridge lease ran out before a renewal confirmed it; standing by", "client_id", p.clientID)
				left = 0
			}
		}
		if held {
			break
		}
		// Its lease cannot run out before left: look again just after, or within a second,
		// so that a lease given up by a clean stop is taken at once.
		wait := min(left+10*time.Millisecond, time.Second)
		select {
		case <-ctx.Done():
			b.closeOutboxes()
			return nil
		case <-time.After(wait):
		}
	}
	b.log.Info("took the bridge lease; active", "client_id", p.clientID, "owner", p.owner)
	// Whatever ends this activation ends the lease too, and every request still under it.
	defer p.current().Lose(errors.New("mqttbridge: the bridge stopped and gave its lease up"))
	// Renewed until bridge has returned, after a clean stop too: the results of a stop go out
	// under the lease.
	keepCtx, stopKeep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeep()
	active, lose := context.WithCancel(ctx)
	defer lose()
	keepDone := make(chan struct{})
	go func() {
		defer close(keepDone)
		p.keep(keepCtx, b.log.Warn, func() { b.fenced.Store(true); lose() })
	}()
	if err := b.openShared(active); err != nil {
		lose()
		stopKeep()
		<-keepDone
		b.closeOutboxes()
		return err
	}
	err := b.bridge(active)
	stopKeep()
	<-keepDone
	if b.fenced.Load() {
		p.close()
		return ErrLeaseLost
	}
	if rerr := p.release(context.WithoutCancel(ctx)); rerr != nil {
		b.log.Warn("giving up the bridge lease failed; a standby takes over once it runs out", "err", rerr)
	}
	p.close()
	return err
}

// openShared opens each controller's outbox queue and ledger in the database. The queues
// share one listening connection: the server wakes every listening connection of the database
// for every notification, so one per queue would cost it a wake-up per controller a change.
func (b *Bridge) openShared(ctx context.Context) error {
	listenDSN := b.pair.dsn
	if b.pair.listen != "" {
		listenDSN = b.pair.listen
	}
	listener, err := outbox.NewPostgresListener(listenDSN)
	if err != nil {
		field := "outbox.postgres.dsn"
		if b.pair.listen != "" {
			field = "outbox.postgres.listen_dsn"
		}
		return &ConfigError{Field: field, Err: err}
	}
	for _, ctl := range b.ctls {
		q := queueName(b.cfg.Broker.ClientID, ctl.url)
		opts := []outbox.Option{outbox.WithLeaseTTL(b.pair.ttl), outbox.WithListener(listener),
			outbox.WithStateChange(func(e outbox.Entry) { b.entryChanged(ctl, e) })}
		ob, err := outbox.OpenPostgres(ctx, b.pair.dsn, q, ctl.client, opts...)
		if errors.Is(err, outbox.ErrNoNotifications) {
			// The configuration points at a pooler that does not carry LISTEN.
			if b.pair.listen != "" {
				return &ConfigError{Field: "outbox.postgres.listen_dsn", Err: fmt.Errorf("no notification comes back on it: "+
					"it must reach the database directly, not through a pooler in transaction mode: %w", err)}
			}
			return &ConfigError{Field: "outbox.postgres.dsn", Err: fmt.Errorf("no notification comes back through it, as behind a pooler in transaction mode (PgBouncer): "+
				"set outbox.postgres.listen_dsn to the same database reached directly: %w", err)}
		}
		if err != nil {
			return err
		}
		ctl.ob = ob
		if ctl.led, err = b.pair.openLedger(ctx, q); err != nil {
			return err
		}
		if ctl.view, err = newOutboxView(ob); err != nil {
			return err
		}
	}
	if b.pair.listen == "" {
		b.pair.named(ctx)
	}
	return nil
}
