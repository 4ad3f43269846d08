package mqttbridge

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPairOneListeningConnection: a pair's bridge with three controllers (three outbox queues)
// listens for all three on one connection, where it had one per queue, each of which the
// server woke for every notification of every queue; each controller's printJob is still
// answered queued, then sent.
func TestPairOneListeningConnection(t *testing.T) {
	dsn := pgtest.DSN(t)
	bk := newEmbedded(t)
	cfg := Config{Broker: BrokerConfig{URL: bk.URL(), ClientID: "bridge-" + t.Name()}, PollInterval: 20 * time.Millisecond,
		Outbox: OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: 2 * waitLimit}}
	var queues []string
	for _, p := range []string{"p1", "p2", "p3"} {
		pl := startPlant(t, p)
		cfg.Printers = append(cfg.Printers, PrinterConfig{Name: p, URL: pl.URL, Printer: p})
		queues = append(queues, queueName(cfg.Broker.ClientID, pl.URL))
	}
	w := watch(t, bk.URL(), prefix+"/#")
	br := startBridge(t, cfg)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	for _, p := range []string{"p1", "p2", "p3"} {
		s.send(cmdTopic(p, "printJob"), printJobCmd("job-"+p))
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		w.waitStates(resultTopic(p), "job-"+p, StateQueued, StateSent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The connections whose last statement was a LISTEN on one of the queues' channels, named
	// as the outbox names them: for the queue in the DSN's schema.
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query IN
		(SELECT 'LISTEN "lpo_' || md5(q || E'\n' || current_schema()) || '"' FROM unnest($1::text[]) AS q)`, queues).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d connections listen for the bridge's 3 queues, want 1", n)
	}
	br.stop(t)
}
