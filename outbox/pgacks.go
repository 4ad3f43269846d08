package outbox

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// This file holds the acknowledgements of a queue in PostgreSQL: each entry's column
// acknowledged keeps the state and attempts its caller last acknowledged ("sent/1"), and a
// partial index holds the settled entries whose column does not name their current state and
// attempts, so that Unacknowledged reads those entries alone. The mark is compared with the
// entry's state and attempts, not cleared by each change: a change written by a version that
// knows no acknowledgements leaves the entry unacknowledged all the same.

// pgSettled names the settled states in SQL, as State.settled does.
const pgSettled = `('sent', 'rejected', 'unknown', 'expired', 'cancelled')`

// pgUnacked is the condition of a settled entry not acknowledged in its current state: the
// index's own, which Unacknowledged writes out so that the planner reads through the index.
const pgUnacked = `state IN ` + pgSettled + ` AND pruned IS NULL AND acknowledged IS DISTINCT FROM state || '/' || attempts::text`

// pgUnackedIndex is the index Unacknowledged reads by.
const pgUnackedIndex = `CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_unacked ON labelprinter_outbox_entries (queue, seq)
	WHERE ` + pgUnacked

// addAcknowledged adds the column acknowledged, its index and the trigger's function that
// tells nobody of an acknowledgement to tables made before them (version 1 either way:
// versions without them read and write the tables as before, and a change they write leaves
// the entry unacknowledged). Every settled entry of such tables is unacknowledged until its
// caller acknowledges it. The index is looked for first, so an open of tables that have it
// takes no lock; it is made last, in the same transaction, so that it is there only with the
// column and the function.
func (s *pgStore) addAcknowledged(ctx context.Context) error {
	var has bool
	if err := s.db().QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_entries_unacked') IS NOT NULL`).Scan(&has); err != nil || has {
		return err
	}
	return pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		for _, q := range []string{`SELECT pg_advisory_xact_lock(7286135)`,
			`ALTER TABLE labelprinter_outbox_entries ADD COLUMN IF NOT EXISTS acknowledged text`,
			pgNotifyFunction, pgUnackedIndex} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// unacknowledged reads the settled entries not acknowledged in their current state through
// their index.
func (s *pgStore) unacknowledged(ctx context.Context) ([]*record, error) {
	rows, err := s.db().Query(ctx, `SELECT `+pgCols+` FROM labelprinter_outbox_entries
		WHERE queue = $1 AND `+pgUnacked+` ORDER BY seq`, s.queue)
	if err != nil {
		return nil, s.fail("reading the unacknowledged entries", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
	if err != nil {
		return nil, s.fail("reading the unacknowledged entries", err)
	}
	return out, nil
}

// pgAckTimeout bounds each acknowledging statement's wait for the database: its caller tells
// the outcomes again after a crash rather than wait on a server that does not answer, as one
// stopping does. pgAckBatch bounds the acks of one statement, so that the bound holds for a
// large call too (a bridge's first start on tables made before acknowledgements acknowledges
// its whole settled history).
const (
	pgAckTimeout = 5 * time.Second
	pgAckBatch   = 1000
)

// acknowledge marks each entry of acks that is still in the ack's state and attempts and not
// pruned, in statements of up to pgAckBatch acks. Another transaction's change of an entry
// either commits before (the entry is left as it is) or waits for this one (and leaves it
// unacknowledged).
func (s *pgStore) acknowledge(ctx context.Context, acks []Ack) error {
	for len(acks) > 0 {
		n := min(len(acks), pgAckBatch)
		if err := s.acknowledgeBatch(ctx, acks[:n]); err != nil {
			return err
		}
		acks = acks[n:]
	}
	return nil
}

// acknowledgeBatch is one statement of acknowledge.
func (s *pgStore) acknowledgeBatch(ctx context.Context, acks []Ack) error {
	ctx, cancel := context.WithTimeout(ctx, pgAckTimeout)
	defer cancel()
	ids, states, attempts := make([]string, len(acks)), make([]string, len(acks)), make([]int32, len(acks))
	for i, a := range acks {
		ids[i], states[i], attempts[i] = a.ID, string(a.State), int32(a.Attempts)
	}
	_, err := s.db().Exec(ctx, `UPDATE labelprinter_outbox_entries e SET acknowledged = e.state || '/' || e.attempts::text
		FROM unnest($2::text[], $3::text[], $4::int[]) AS a(id, state, attempts)
		WHERE e.queue = $1 AND e.id = a.id AND e.state = a.state AND e.attempts = a.attempts
		AND e.state IN `+pgSettled+` AND e.pruned IS NULL AND e.acknowledged IS DISTINCT FROM e.state || '/' || e.attempts::text`,
		s.queue, ids, states, attempts)
	return s.fail("acknowledging", err)
}
