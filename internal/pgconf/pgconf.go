// Package pgconf holds the settings every PostgreSQL pool of the module shares.
package pgconf

import (
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NoSessionStatements sets cfg, parsed from dsn, so that its connections keep no named
// prepared statement in their sessions, unless dsn chooses default_query_exec_mode itself.
// pgx's default prepares named statements, which live in a session: a pooler in transaction
// mode hands the next transaction another session, without them. Descriptions cached in the
// client and unnamed statements keep nothing in the session.
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
