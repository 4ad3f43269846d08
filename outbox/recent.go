package outbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"
)

// This file holds Recent: the newest final entries of an outbox, read through the file's index
// of final entries by their last change (boltindex.go), so that a caller that shows what
// happened last (a Sparkplug node's Command/Results after a restart) reads those entries and
// no other.

// recentStore is a store that reads its newest final entries.
type recentStore interface {
	// recent returns the newest n final entries by their last change (then by sequence
	// number), oldest first.
	recent(ctx context.Context, n int) ([]*record, error)
}

// Recent returns the newest n entries in final states (Sent, Rejected, Expired, Cancelled) by
// their last change, oldest first; fewer when the outbox holds fewer, none for n <= 0. A file
// reads them through its index of final entries by their last change: n entries, however long
// its history. A queue in PostgreSQL reads them through an index of its final entries by their
// last change, added to tables made before it when they are opened.
func (o *Outbox) Recent(n int) ([]Entry, error) {
	if n <= 0 {
		return nil, nil
	}
	o.gate.RLock()
	defer o.gate.RUnlock()
	if o.closed {
		return nil, errClosed
	}
	rs, ok := o.store.(recentStore)
	if !ok {
		return nil, fmt.Errorf("outbox: this store cannot read its newest entries")
	}
	ctx, cancel := o.opContext()
	defer cancel()
	recs, err := rs.recent(ctx, n)
	if err != nil {
		return nil, err
	}
	return toEntries(recs)
}

// recent walks the index of final entries back from its end.
func (s *boltStore) recent(_ context.Context, n int) ([]*record, error) {
	var out []*record
	err := s.db.View(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		c := tx.Bucket(bucketFinal).Cursor()
		for fk, _ := c.Last(); fk != nil && len(out) < n; fk, _ = c.Prev() {
			k := bytes.Clone(fk[8:])
			r, err := decodeRecord(entries.Get(k))
			if err != nil || !r.State.final() {
				return fmt.Errorf("outbox: unreadable entry, or its index is damaged (sequence %d)", binary.BigEndian.Uint64(k))
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// pgFinalIndex is the index Recent reads a queue's final entries by, newest first.
const pgFinalIndex = `CREATE INDEX IF NOT EXISTS labelprinter_outbox_entries_final ON labelprinter_outbox_entries (queue, updated, seq)
	WHERE state IN ('sent', 'rejected', 'expired', 'cancelled') AND pruned IS NULL`

// addFinalIndex adds the index of final entries to tables made before it (version 1 either
// way: versions without it read the tables as before). It is looked for first, so an open of
// tables that have it takes no lock.
func (s *pgStore) addFinalIndex(ctx context.Context) error {
	var has bool
	if err := s.db().QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_entries_final') IS NOT NULL`).Scan(&has); err != nil || has {
		return err
	}
	return pgx.BeginTxFunc(ctx, s.db(), s.abandon.TxOptions(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7286135)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgFinalIndex)
		return err
	})
}

// pgRecent reads the newest $2 final entries of queue $1 through their index: its condition,
// written out, is what lets the planner use it.
const pgRecent = `SELECT ` + pgCols + ` FROM (SELECT ` + pgCols + ` FROM labelprinter_outbox_entries
	WHERE queue = $1 AND state IN ('sent', 'rejected', 'expired', 'cancelled') AND pruned IS NULL
	ORDER BY updated DESC, seq DESC LIMIT $2) AS newest
	ORDER BY updated, seq`

// recent has the database read the newest n final entries of the queue.
func (s *pgStore) recent(ctx context.Context, n int) ([]*record, error) {
	rows, err := s.db().Query(ctx, pgRecent, s.queue, n)
	if err != nil {
		return nil, s.fail("reading the newest entries", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*record, error) { return scanRecord(row) })
	if err != nil {
		return nil, s.fail("reading the newest entries", err)
	}
	return out, nil
}
