package outbox

import (
	"context"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgconf"
)

// This file holds the listing of a database's queues, for an operator who must name one:
// it reads and never creates, so a mistyped database or queue is said, not made.

// QueueInfo is one outbox queue of a PostgreSQL database, as PostgresQueues lists it.
type QueueInfo struct {
	// Name is the queue's name, as OpenPostgres takes it.
	Name string
	// Controller is the controller URL the queue belongs to (normalised, without
	// credentials), or "" while no Outbox with a client has opened it.
	Controller string
	// Entries counts its entries by state; pruned ones are not counted.
	Entries map[State]int
}

// PostgresQueues returns the outbox queues of the database at dsn (as OpenPostgres reads it),
// sorted by name, without creating anything: a database without the outbox's tables has none.
// A queue is there once an entry was enqueued to it (a queue whose entries were all pruned
// remains) or an Outbox with a client opened it. No error carries the DSN's password.
func PostgresQueues(ctx context.Context, dsn string) ([]QueueInfo, error) {
	cfg, secret, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	pgconf.NoSessionStatements(cfg, dsn) // a pooler in transaction mode may stand between
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = pgConnectTimeout
	}
	f := &pgStore{secret: secret, sslAsked: pgconf.SSLModeAsked(dsn)}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, f.fail("connecting", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var entries, queues bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('labelprinter_outbox_entries') IS NOT NULL,
		to_regclass('labelprinter_outbox_queues') IS NOT NULL`).Scan(&entries, &queues); err != nil {
		return nil, f.fail("looking for the outbox tables", err)
	}
	byName := map[string]*QueueInfo{}
	get := func(name string) *QueueInfo {
		q := byName[name]
		if q == nil {
			q = &QueueInfo{Name: name, Entries: map[State]int{}}
			byName[name] = q
		}
		return q
	}
	if entries {
		rows, _ := conn.Query(ctx, `SELECT queue, state, count(*) FILTER (WHERE pruned IS NULL)
			FROM labelprinter_outbox_entries GROUP BY queue, state`)
		var name, state string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&name, &state, &n}, func() error {
			if q := get(name); n > 0 {
				q.Entries[State(state)] = n
			}
			return nil
		})
		if err != nil {
			return nil, f.fail("listing the queues", err)
		}
	}
	if queues {
		rows, _ := conn.Query(ctx, `SELECT queue, controller FROM labelprinter_outbox_queues`)
		var name, controller string
		_, err := pgx.ForEachRow(rows, []any{&name, &controller}, func() error {
			get(name).Controller = controller
			return nil
		})
		if err != nil {
			return nil, f.fail("listing the queues' controllers", err)
		}
	}
	out := make([]QueueInfo, 0, len(byName))
	for _, q := range byName {
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
