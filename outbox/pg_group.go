package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labelprinter/go-labelprinter/internal/group"
)

// This file holds how the adds and reads by ID of a process's queues in one database share
// their statements: adds that arrive while another's insert is in flight are inserted
// together, in one statement and one commit, and told in one transaction of notifications;
// reads that arrive while another's is in flight are read together, in one statement. An add
// or read made while none is in flight goes at once, alone. Each round trip costs the server
// and this process far more than the rows it carries.

// pgGroupMax bounds the entries of one batch.
const pgGroupMax = 256

// pgGroups are the batches of the queues that share a DSN: every queue of one PostgresListener
// opened with the same DSN (so the same database and schemas), or one queue alone.
type pgGroups struct {
	adds  *group.Group[*pgAdd]
	reads *group.Group[*pgRead]
}

func newPGGroups() *pgGroups {
	return &pgGroups{
		adds:  group.New(insertBatch, func(a *pgAdd) string { return a.s.queue + "\n" + a.r.ID }, pgGroupMax),
		reads: group.New(readBatch, nil, pgGroupMax),
	}
}

// pgAdd is one add in a batch, and the batch's answer to it.
type pgAdd struct {
	s        *pgStore
	r        *record
	ctx      context.Context // the caller's: a batch's statements carry its first add's values
	deadline time.Time       // when the add's time (pgEnqueueTimeout from its call) runs out

	stored *record // the entry inserted; nil with err nil: the ID was there already
	err    error
}

// add inserts r, with the adds of the process's other queues in the same database that
// arrive while an insert is in flight; an ID already there (pruned or not) adds nothing. Two
// adds of one ID never share a batch: the second goes in the next and finds the first's
// entry. An add is answered within pgEnqueueTimeout of its call: one whose time runs out
// before its batch left is taken out and stores nothing; one whose context ends while its
// batch is in flight is answered with the context's error at once, and the batch's outcome
// decides whether its entry is stored (the error says it may be).
func (s *pgStore) add(ctx context.Context, r *record) (*record, bool, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, pgEnqueueTimeout)
	defer cancel()
	a := &pgAdd{s: s, r: r, ctx: ctx}
	a.deadline, _ = ctx.Deadline()
	sent, err := s.groups.adds.Do(ctx, a)
	if err != nil {
		timedOut := parent.Err() == nil
		switch {
		case !sent && timedOut:
			return nil, false, s.fail(fmt.Sprintf("storing the entry: no answer within %v; nothing was stored", pgEnqueueTimeout), err)
		case !sent:
			return nil, false, s.fail("storing the entry: nothing was stored", err)
		case timedOut:
			return nil, false, s.fail(fmt.Sprintf("storing the entry: no answer within %v; it may or may not be stored (Enqueue the same ID again to find out)", pgEnqueueTimeout), err)
		default:
			return nil, false, s.fail("storing the entry: it may or may not be stored (Enqueue the same ID again to find out)", err)
		}
	}
	if a.err != nil {
		return nil, false, a.err
	}
	if a.stored != nil {
		return a.stored, true, nil
	}
	stored, err := s.lookup(ctx, r.ID)
	if err != nil {
		return nil, false, err
	}
	return stored, false, nil
}

// insertBatch inserts the entries of batch in one statement through its first add's pool,
// answers each add, and tells the new entries in one transaction.
func insertBatch(batch []*pgAdd) {
	s := batch[0].s
	deadline := batch[0].deadline
	for _, a := range batch[1:] {
		if a.deadline.Before(deadline) {
			deadline = a.deadline
		}
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(batch[0].ctx), deadline)
	defer cancel()
	fail := func(what string, err error) {
		for _, a := range batch {
			a.err = a.s.fail(what, err)
		}
	}
	conn, err := s.db().Acquire(ctx)
	if err != nil {
		what := "storing the entry: nothing was stored"
		if ctx.Err() != nil {
			what = fmt.Sprintf("storing the entry: no answer within %v; nothing was stored", pgEnqueueTimeout)
		}
		fail(what, err)
		return
	}
	n := len(batch)
	queues, ids, printers, kinds, states := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	jobs, expires := make([]*string, n), make([]int64, n)
	for i, a := range batch {
		queues[i], ids[i], printers[i], kinds[i], states[i] = a.s.queue, a.r.ID, a.r.Printer, a.r.Kind, string(a.r.State)
		jobs[i], expires[i] = nullable(a.r.Job), int64(a.r.ExpireAfter)
	}
	// The rows go in the order of the adds (WITH ORDINALITY), so their sequence numbers follow it.
	rows, err := conn.Query(ctx, `INSERT INTO labelprinter_outbox_entries
		(queue, id, printer, kind, job, expire_after, state, attempts, error)
		SELECT q, i, p, k, j, x, st, 0, '' FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
			WITH ORDINALITY AS t(q, i, p, k, j, x, st, n) ORDER BY n
		ON CONFLICT (queue, id) DO NOTHING RETURNING queue, `+pgCols,
		queues, ids, printers, kinds, jobs, expires, states)
	type key struct{ queue, id string }
	got := map[key]*record{}
	for err == nil && rows.Next() {
		var q string
		var r *record
		r, err = scanRecord(prefixed{rows, &q})
		if err == nil {
			got[key{q, r.ID}] = r
		}
	}
	if rows != nil {
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	conn.Release()
	if err != nil {
		var pe *pgconn.PgError
		switch {
		case ctx.Err() != nil && pgconn.SafeToRetry(err):
			fail(fmt.Sprintf("storing the entry: no answer within %v; nothing was stored", pgEnqueueTimeout), err)
		case ctx.Err() != nil:
			fail(fmt.Sprintf("storing the entry: no answer within %v; it may or may not be stored (Enqueue the same ID again to find out)", pgEnqueueTimeout), err)
		case errors.As(err, &pe), pgconn.SafeToRetry(err):
			fail("storing the entry: nothing was stored", err) // the server refused it: the statement rolled back
		default:
			fail("storing the entry: it may or may not be stored (Enqueue the same ID again to find out)", err)
		}
		return
	}
	var created []*pgAdd
	for _, a := range batch {
		if r := got[key{a.s.queue, a.r.ID}]; r != nil {
			a.stored = r
			created = append(created, a)
		}
	}
	tellNew(ctx, s, created)
}

// prefixed scans a row's first column into first and the rest as scanRecord asks.
type prefixed struct {
	row   pgx.Row
	first *string
}

func (p prefixed) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }

// tellNew tells the queues' listeners of the entries of adds, just added, in one transaction
// of its own that writes nothing durable: it does not wait for the disk, so its lock on
// notifications is short. A failure loses only the wake-ups; Runs look at the lanes on their
// own, and each Outbox reads its entries back. It goes through s's pool.
func tellNew(ctx context.Context, s *pgStore, adds []*pgAdd) {
	if len(adds) == 0 {
		return
	}
	channels, payloads := make([]string, len(adds)), make([]string, len(adds))
	for i, a := range adds {
		r := a.stored
		a.s.expect(r)
		payload, err := json.Marshal(struct {
			*record
			New bool `json:"new"`
		}{r, true})
		if err != nil || len(payload) > 7900 {
			payload = fmt.Appendf(nil, `{"seq":%d,"trimmed":true,"new":true}`, r.Seq)
		}
		channels[i], payloads[i] = a.s.channel, string(payload)
	}
	_, _ = s.db().Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify(c, p)
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(c, p, n) ORDER BY n`, channels, payloads)
}

// pgRead is one read of entries by ID in a batch, and the batch's answer to it.
type pgRead struct {
	s        *pgStore
	ids      []string
	ctx      context.Context // the caller's: a batch's statement carries its first read's values
	deadline time.Time       // the reader's, if any

	recs []*record
	errs []error
}

// lookupEach reads the entries of ids, with the reads of the process's other queues in the
// same database that arrive while a read is in flight, in one statement.
func (s *pgStore) lookupEach(ctx context.Context, ids []string) ([]*record, []error) {
	q := &pgRead{s: s, ids: ids, ctx: ctx}
	q.deadline, _ = ctx.Deadline()
	if _, err := s.groups.reads.Do(ctx, q); err != nil {
		recs, errs := make([]*record, len(ids)), make([]error, len(ids))
		for i, id := range ids {
			errs[i] = s.fail(fmt.Sprintf("reading %q", id), err)
		}
		return recs, errs
	}
	return q.recs, q.errs
}

// readBatch reads the entries of every read of batch in one statement through its first
// read's pool, within the earliest of their deadlines (opTimeout when none has one).
func readBatch(batch []*pgRead) {
	s := batch[0].s
	deadline := time.Now().Add(opTimeout)
	var queues, ids []string
	for _, q := range batch {
		if !q.deadline.IsZero() && q.deadline.Before(deadline) {
			deadline = q.deadline
		}
		for _, id := range q.ids {
			queues, ids = append(queues, q.s.queue), append(ids, id)
		}
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(batch[0].ctx), deadline)
	defer cancel()
	type key struct{ queue, id string }
	found := map[key]*record{}
	prunedAt := map[key]time.Time{}
	rows, err := s.db().Query(ctx, `SELECT e.queue, `+pgCols+`, pruned FROM labelprinter_outbox_entries e
		JOIN unnest($1::text[], $2::text[]) AS t(q, i) ON e.queue = t.q AND e.id = t.i`, queues, ids)
	for err == nil && rows.Next() {
		var (
			q        string
			r        record
			job, res *string
			expire   int64
			pruned   *time.Time
		)
		if err = rows.Scan(&q, &r.Seq, &r.ID, &r.Printer, &r.Kind, &job, &expire, &r.State, &r.Attempts, &r.Enqueued, &r.Updated, &r.Error, &res, &pruned); err != nil {
			break
		}
		r.ExpireAfter = time.Duration(expire)
		r.Enqueued, r.Updated = r.Enqueued.UTC(), r.Updated.UTC()
		if job != nil {
			r.Job = json.RawMessage(*job)
		}
		if res != nil {
			r.Response = json.RawMessage(*res)
		}
		found[key{q, r.ID}] = &r
		if pruned != nil {
			prunedAt[key{q, r.ID}] = pruned.UTC()
		}
	}
	if rows != nil {
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	for _, q := range batch {
		q.recs, q.errs = make([]*record, len(q.ids)), make([]error, len(q.ids))
		for i, id := range q.ids {
			k := key{q.s.queue, id}
			r := found[k]
			pruned, isPruned := prunedAt[k]
			switch {
			case err != nil:
				q.errs[i] = q.s.fail(fmt.Sprintf("reading %q", id), err)
			case r == nil:
				q.errs[i] = fmt.Errorf("%w: %q", ErrNotFound, id)
			case isPruned:
				q.errs[i] = prunedError(id, tombstone{State: r.State, Updated: r.Updated, Pruned: pruned})
			default:
				rec := *r
				q.recs[i] = &rec
			}
		}
	}
}
