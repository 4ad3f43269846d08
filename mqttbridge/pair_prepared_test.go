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
	conns := p.db().AcquireAllIdle(ctx)
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

// TestPairPreparedOnSessions: once a pair's bridge has opened its outboxes on a DSN with no
// listen DSN (each heard its own notification through it, so it reaches the server's own
// sessions), the lease and the ledger go through statements prepared once per connection:
// after a printJob is answered, the pair's sessions hold some. With a listen DSN, as behind a
// pooler in transaction mode, TestPairNoPreparedStatements' rule stays.
func TestPairPreparedOnSessions(t *testing.T) {
	for _, listen := range []bool{false, true} {
		dsn := pgtest.DSN(t)
		bk := newEmbedded(t)
		pl := startPlant(t, "p1")
		cfg := testConfig(t, bk.URL(), pl, "p1")
		cfg.StateDir = ""
		cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: 2 * waitLimit}
		if listen {
			cfg.Outbox.Postgres.ListenDSN = dsn
		}
		w := watch(t, bk.URL(), prefix+"/#")
		b, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		br := runBridge(t, b)
		w.waitOnline(1)
		newSender(t, bk.URL()).send(cmdTopic("p1", "printJob"), printJobCmd("job"))
		w.waitStates(resultTopic("p1"), "job", StateQueued, StateSent)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		// The prepared statements of the pool's sessions that are idle: the lease's renewals
		// keep one busy now and then, so the look is made again until one is found.
		n, looked := 0, 0
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && (n == 0 || looked == 0); time.Sleep(10 * time.Millisecond) {
			for _, c := range b.pair.db().AcquireAllIdle(ctx) {
				var k int
				err := c.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements`, pgx.QueryExecModeSimpleProtocol).Scan(&k)
				c.Release()
				if err != nil {
					t.Fatal(err)
				}
				n, looked = n+k, looked+1
			}
			if listen && looked > 0 {
				break
			}
		}
		cancel()
		switch {
		case listen && n > 0:
			t.Errorf("with a listen DSN, the pair's sessions hold %d prepared statements; a pooler in transaction mode would break them", n)
		case !listen && n == 0:
			t.Errorf("on a DSN whose notifications came back, the pair's sessions hold no prepared statement (%d looked at)", looked)
		}
		br.stop(t)
	}
}
