package mqttbridge

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPairNoPreparedStatements: the pair's lease and ledger leave no named prepared statement
// in their sessions, which a pooler in transaction mode would hand to another client (or lose)
// between two transactions: after taking, renewing and giving up the lease and writing and
// reading the ledger, none of the pool's connections holds a prepared statement.
func TestPairNoPreparedStatements(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := &Config{Broker: BrokerConfig{ClientID: "prepared-" + t.Name()},
		Outbox: OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: 2 * time.Second}}
	p, err := openPair(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if held, owner, _, err := p.acquire(ctx); err != nil || !held {
		t.Fatalf("acquire: held %v (owner %q), %v", held, owner, err)
	}
	if ok, err := p.renew(ctx); err != nil || !ok {
		t.Fatalf("renew: %v, %v", ok, err)
	}
	l, err := p.openLedger(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.putAbort(abortRecord{Printer: "p1", ID: "a", State: "done", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if r, err := l.abort("p1", "a"); err != nil || r == nil {
		t.Fatalf("abort: %+v, %v", r, err)
	}
	if err := p.release(ctx); err != nil {
		t.Fatal(err)
	}
	conns := p.pool.AcquireAllIdle(ctx)
	if len(conns) == 0 {
		t.Fatal("the pool holds no idle connection to look into")
	}
	for _, c := range conns {
		var n int
		err := c.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements`, pgx.QueryExecModeSimpleProtocol).Scan(&n)
		c.Release()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("a session of the pair's pool holds %d prepared statements; a pooler in transaction mode would break them", n)
		}
	}
}
