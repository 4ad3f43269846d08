package mqttbridge

import (
	"context"
	"encoding/json"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/group"
)

// This file holds how a pair reads the tombstones of cancels that came before their job: the
// reads of every controller that arrive while one is in flight go together, in one statement,
// since each printJob reads one and a round trip costs the server far more than a row.

// tombRead is one read of a cancel's tombstone, and the batch's answer to it.
type tombRead struct {
	queue, printer, id string
	deadline           time.Time

	rec *cancelRecord
	err error
}

// newTombReads returns the group that reads p's tombstones in batches.
func newTombReads(p *pair) *group.Group[*tombRead] {
	return group.New(p.readTombs, nil, 256)
}

// cancelled returns the tombstone of the cancel of id on printer, or nil when there is none.
func (l *pgLedger) cancelled(printer, id string) (*cancelRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	r := &tombRead{queue: l.queue, printer: printer, id: id}
	r.deadline, _ = ctx.Deadline()
	if _, err := l.p.tombs.Do(ctx, r); err != nil {
		return nil, l.p.fail("reading the ledger", err)
	}
	return r.rec, r.err
}

// readTombs reads the tombstones of batch in one statement, within the earliest of their
// deadlines.
func (p *pair) readTombs(batch []*tombRead) {
	deadline := batch[0].deadline
	n := len(batch)
	queues, printers, ids := make([]string, n), make([]string, n), make([]string, n)
	for i, r := range batch {
		if r.deadline.Before(deadline) {
			deadline = r.deadline
		}
		queues[i], printers[i], ids[i] = r.queue, r.printer, r.id
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	type key struct{ queue, printer, id string }
	found := map[key][]byte{}
	rows, err := p.db().Query(ctx, `SELECT l.queue, l.printer, l.id, l.record FROM labelprinter_mqtt_ledger l
		JOIN unnest($1::text[], $2::text[], $3::text[]) AS t(q, p, i) ON l.queue = t.q AND l.kind = 'cancel' AND l.printer = t.p AND l.id = t.i`,
		queues, printers, ids)
	for err == nil && rows.Next() {
		var k key
		var b []byte
		if err = rows.Scan(&k.queue, &k.printer, &k.id, &b); err == nil {
			found[k] = b
		}
	}
	if rows != nil {
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	for _, r := range batch {
		if err != nil {
			r.err = p.fail("reading the ledger", err)
			continue
		}
		if b := found[key{r.queue, r.printer, r.id}]; b != nil {
			r.rec = new(cancelRecord)
			if r.err = json.Unmarshal(b, r.rec); r.err != nil {
				r.rec = nil
			}
		}
	}
}
