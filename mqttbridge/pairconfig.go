package mqttbridge

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labelprinter/go-labelprinter/internal/secretfile"
)

// DefaultLeaseTTL is how long a bridge's lease, and its outbox lanes' leases, last without
// renewal when outbox.lease_ttl is not set.
const DefaultLeaseTTL = 10 * time.Second

// minLeaseTTL is the shortest lease_ttl: the lease is renewed every quarter of it.
const minLeaseTTL = 100 * time.Millisecond

// OutboxConfig is the "outbox" block: where the outbox and its ledger live when they are not
// files in state_dir.
type OutboxConfig struct {
	// Postgres puts the outboxes, the ledger and the bridge's lease in a PostgreSQL database,
	// so that several bridges with one configuration run as a pair: one active, the others
	// standing by.
	Postgres *PostgresConfig `yaml:"postgres"`
	// LeaseTTL is how long the active bridge's lease lasts without renewal (default 10s): a
	// standby takes over within it once the active bridge dies, and an active bridge that
	// cannot renew it stops acting before it runs out.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// PruneAfter is how old a settled entry's last change must be for the bridge to prune it,
	// keeping its id (default 720h, 30 days).
	PruneAfter time.Duration `yaml:"prune_after"`
}

// PostgresConfig says where the database is.
type PostgresConfig struct {
	// DSN is a postgres:// URL or a keyword/value connection string, read as libpq does
	// (PG* variables and PGPASSFILE included). It must not hold a password when PasswordFile
	// is set.
	DSN string `yaml:"dsn"`
	// PasswordFile holds the database password, less one trailing newline.
	PasswordFile string `yaml:"password_file"`
	// ListenDSN is the same database reached without a pooler in transaction mode (directly,
	// or through a pooler in session mode), for when DSN goes through one (PgBouncer's
	// pool_mode = transaction): such a pooler carries the leases, the ledger and the outboxes'
	// transactions, but not LISTEN, and the outboxes hear their notifications here. Written
	// as DSN is; it must not hold a password when PasswordFile is set, which gives it that
	// password too.
	ListenDSN string `yaml:"listen_dsn"`
}

// pairMode reports whether the bridge keeps its state in PostgreSQL.
func (c *Config) pairMode() bool { return c.Outbox.Postgres != nil }

// queueName is the outbox queue (and ledger key) of one controller of a bridge pair: several
// pairs share a database as long as their client ids differ.
func queueName(clientID, controllerURL string) string {
	return clientID + " " + controllerURL
}

// validateOutbox checks the outbox block after the printers' URLs are normalised.
func (c *Config) validateOutbox() error {
	if err := c.validatePruneAfter(); err != nil {
		return err
	}
	pg := c.Outbox.Postgres
	if pg == nil {
		if c.Outbox.LeaseTTL != 0 {
			return fieldErr("outbox.lease_ttl", "set, but outbox.postgres is not: a lease is for a pair of bridges sharing a database")
		}
		if c.StateDir == "" {
			return fieldErr("state_dir", "required (or outbox.postgres): the outbox files live there")
		}
		return nil
	}
	if c.StateDir != "" {
		return fieldErr("state_dir", "set together with outbox.postgres: the outbox is either files in state_dir or PostgreSQL, not both")
	}
	switch {
	case c.Outbox.LeaseTTL == 0:
		c.Outbox.LeaseTTL = DefaultLeaseTTL
	case c.Outbox.LeaseTTL < minLeaseTTL:
		return fieldErr("outbox.lease_ttl", "%v is below the %v floor", c.Outbox.LeaseTTL, minLeaseTTL)
	}
	if pg.DSN == "" {
		return fieldErr("outbox.postgres.dsn", "required")
	}
	if _, err := pgconn.ParseConfig(pg.DSN); err != nil {
		// pgx's text may quote the DSN, password and all: it is not passed on.
		return fieldErr("outbox.postgres.dsn", "not a PostgreSQL URL or keyword/value connection string")
	}
	if pg.ListenDSN != "" {
		if _, err := pgconn.ParseConfig(pg.ListenDSN); err != nil {
			return fieldErr("outbox.postgres.listen_dsn", "not a PostgreSQL URL or keyword/value connection string")
		}
	}
	if pg.PasswordFile != "" {
		if secretfile.DSNHasPassword(pg.DSN) {
			return fieldErr("outbox.postgres", "dsn holds a password and password_file is set: keep the password in one place (the file)")
		}
		if secretfile.DSNHasPassword(pg.ListenDSN) {
			return fieldErr("outbox.postgres", "listen_dsn holds a password and password_file is set: keep the password in one place (the file)")
		}
		if _, err := secretfile.Read(pg.PasswordFile); err != nil {
			return &ConfigError{Field: "outbox.postgres.password_file", Err: err}
		}
	}
	for i, p := range c.Printers {
		if q := queueName(c.Broker.ClientID, p.URL); len(q) > 256 {
			return fieldErr(fmt.Sprintf("printers[%d].url", i), "with broker.client_id it names the outbox queue, which is longer than 256 bytes: shorten the client id")
		}
	}
	return nil
}
