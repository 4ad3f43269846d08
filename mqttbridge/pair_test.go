package mqttbridge

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPairLeaseLost: an active bridge whose lease is taken (here by writing another owner
// into its row, as a standby does once the lease ran out) leaves the broker with its Will,
// Run returns ErrLeaseLost, and a command published afterwards reaches no printer.
func TestPairLeaseLost(t *testing.T) {
	dsn := pgtest.DSN(t)
	bk := newEmbedded(t)
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: time.Second}
	w := watch(t, bk.URL(), prefix+"/#")
	var opts []Option
	if os.Getenv("MQTTBRIDGE_DEBUG") != "" {
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	b, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("p1", "printJob"), printJobCmd("before"))
	w.waitStates(resultTopic("p1"), "before", StateQueued, StateSent)

	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE labelprinter_mqtt_bridges SET owner = 'another', lease_until = now() + interval '1 hour'
		WHERE client_id = $1`, cfg.Broker.ClientID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Run returned %v, want ErrLeaseLost", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the bridge kept running after losing its lease")
	}
	if last := w.last(onlineTopic(prefix)); last == nil || string(last.Payload) != "offline" {
		t.Errorf("after the lease was lost, %s is not offline (the Will)", onlineTopic(prefix))
	}
	s.send(cmdTopic("p1", "printJob"), printJobCmd("after"))
	time.Sleep(500 * time.Millisecond)
	if n := pl.printed("after"); n != 0 {
		t.Errorf("a command published after the lease was lost reached the printer %d times", n)
	}
	if st := w.statesOf(resultTopic("p1"), "after"); len(st) != 0 {
		t.Errorf("a bridge without its lease answered %v", st)
	}
}
