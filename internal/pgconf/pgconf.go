// Package pgconf holds the settings every PostgreSQL pool of the module shares.
package pgconf

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NoSessionStatements sets cfg, parsed from dsn, so that its connections keep no named
// prepared statement in their sessions, unless dsn chooses default_query_exec_mode itself.
// pgx's default prepares named statements, which live in a session: a pooler in transaction
// mode hands the next transaction another session, without them. Descriptions cached in the
// client and unnamed statements keep nothing in the session. The outbox on PostgreSQL
// switches to prepared statements once it has seen that its DSN reaches the server's own
// sessions (outbox/pg_listen.go's named).
func NoSessionStatements(cfg *pgxpool.Config, dsn string) {
	if !strings.Contains(dsn, "default_query_exec_mode") {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
}

// Close closes pool and returns once it is closed or after wait, whichever comes first; the
// pool finishes closing on its own after that. Closing an idle connection takes no answer
// from the server, but one cut off in a query is closed after a cancel request to the server,
// which pgx waits for up to 15 s: a server that does not answer must not hold up the caller.
func Close(pool *pgxpool.Pool, wait time.Duration) {
	closed := make(chan struct{})
	go func() {
		pool.Close()
		close(closed)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
	}
}

// Abandoned is the rule for a transaction whose client went silent in it: the server ends it
// (and its session) once it has waited idle on its client for longer than the lease the
// transaction serves, or 2 s, whichever is longer. A client whose host died or was cut off in
// the middle of a transaction otherwise leaves it open, with its row locks, until the server
// notices the dead connection, about two hours with default TCP keepalives: a lane or lease
// row locked that long stops everyone who would take it over.
//
// The setting is transaction-local (SET LOCAL), so it is also right behind a pooler in
// transaction mode, and it is sent with the BEGIN, so it costs no round trip.
type Abandoned struct {
	begin string
}

// AbandonAfter returns the rule for transactions that serve a lease of ttl.
func AbandonAfter(ttl time.Duration) Abandoned {
	d := max(ttl, 2*time.Second)
	return Abandoned{begin: fmt.Sprintf("BEGIN; SET LOCAL idle_in_transaction_session_timeout = %d", d.Milliseconds())}
}

// TxOptions begins a transaction under the rule, for pgx.BeginTxFunc.
func (a Abandoned) TxOptions() pgx.TxOptions { return pgx.TxOptions{BeginQuery: a.begin} }
