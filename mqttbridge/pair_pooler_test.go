package mqttbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestPairBehindPooler: with outbox.postgres.dsn through PgBouncer in transaction mode, which
// carries the lease and every transaction but not LISTEN, the bridge does not stop answering
// silently once the broker's in-flight window (mosquitto's 20) is full: without listen_dsn its
// Run ends at once with a *ConfigError naming outbox.postgres.listen_dsn; with it (and
// password_file giving both DSNs the password), 25 printJobs sent at once are each answered
// queued and sent, the listening connection logged in with the file's password.
func TestPairBehindPooler(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	pooled, direct := pgtest.Pooler(t).NewDatabase(t)
	var bk testBroker
	if bin := mosquittoBin(t); bin != "" {
		bk = newMosquitto(t, bin)
	} else {
		t.Log("mosquitto is not installed: the embedded broker stands in")
		bk = newEmbedded(t)
	}
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: pooled}, LeaseTTL: 10 * time.Second}

	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err = b.Run(ctx)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "outbox.postgres.dsn" || !strings.Contains(err.Error(), "outbox.postgres.listen_dsn") ||
		!strings.Contains(err.Error(), "pooler in transaction mode") {
		t.Fatalf("Run through the pooler without listen_dsn: %v; want a *ConfigError naming the pooler and outbox.postgres.listen_dsn", err)
	}

	// Another pair: the lease the failed Run took runs out in its own time.
	cfg.Broker.ClientID += "-listen"
	dir := t.TempDir()
	// The listening connection logs in as a role the server asks for its password, which only
	// the password file gives; the pooler lets any password through.
	role := pgtest.PasswordRole(t)
	cfg.Outbox.Postgres = &PostgresConfig{DSN: pooled, ListenDSN: pgtest.WithUser(direct, role.Name), PasswordFile: writeFile(t, dir, "pgpw", role.Password+"\n")}
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, cfg)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	const n = 25
	for i := range n {
		s.send(cmdTopic("p1", "printJob"), printJobCmd(fmt.Sprintf("job-%02d", i)))
	}
	for i := range n {
		w.waitStates(resultTopic("p1"), fmt.Sprintf("job-%02d", i), StateQueued, StateSent)
	}
	for i := range n {
		if c := pl.printed(fmt.Sprintf("job-%02d", i)); c != 1 {
			t.Errorf("job-%02d printed %d times", i, c)
		}
	}
}

// TestPairListenerBlackholed: the pair's listening connection (outbox.postgres.listen_dsn,
// here through a fault proxy) drops everything once the bridge is online, a partition that
// leaves the database's other connections alone; no notification arrives after that. The
// bridge still answers commands, from the changes its outbox reads back every second when
// none was heard (each told within 2 s): 25 printJobs sent at once, more than the broker's
// window of unanswered ones (mosquitto's 20), are each answered queued and sent.
func TestPairListenerBlackholed(t *testing.T) {
	dsn := pgtest.DSN(t)
	var bk testBroker
	if bin := mosquittoBin(t); bin != "" {
		bk = newMosquitto(t, bin)
	} else {
		t.Log("mosquitto is not installed: the embedded broker stands in")
		bk = newEmbedded(t)
	}
	px, listen := pgProxy(t, dsn)
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn, ListenDSN: listen}, LeaseTTL: 10 * time.Second}
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, cfg)
	w.waitOnline(1)
	px.Set(faultproxy.Blackhole)

	s := newSender(t, bk.URL())
	const n = 25
	start := time.Now()
	for i := range n {
		s.send(cmdTopic("p1", "printJob"), printJobCmd(fmt.Sprintf("job-%02d", i)))
	}
	for i := range n {
		w.waitStates(resultTopic("p1"), fmt.Sprintf("job-%02d", i), StateQueued, StateSent)
	}
	took := time.Since(start)
	t.Logf("%d printJobs answered queued and sent in %v with the listener cut off", n, took.Round(time.Millisecond))
	// Each change is told within 2 s without a notification; the broker holds back the last
	// five until the first twenty were answered: three rounds, 6 s, and 10 s more for a
	// loaded machine.
	if limit := 3*2*time.Second + 10*time.Second; took > limit {
		t.Errorf("answering %d printJobs with the listener cut off took %v, want within %v", n, took.Round(time.Millisecond), limit)
	}
	for i := range n {
		if c := pl.printed(fmt.Sprintf("job-%02d", i)); c != 1 {
			t.Errorf("job-%02d printed %d times", i, c)
		}
	}
	if px.Conns() < 1 {
		t.Error("the bridge's listening connection did not go through the proxy")
	}
}
