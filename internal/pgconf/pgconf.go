// Package pgconf holds the settings every PostgreSQL pool of the module shares.
package pgconf

import (
	"strings"

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
