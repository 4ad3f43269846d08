package mqttbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
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
	// The broker publishes the Will once it has the DISCONNECT, and the watcher gets it a
	// moment later: Run may return first.
	eventually(t, "the Will: "+onlineTopic(prefix)+" offline after the lease was lost", func() bool {
		last := w.last(onlineTopic(prefix))
		return last != nil && onlineStateOf(last) == BridgeOffline
	})
	s.send(cmdTopic("p1", "printJob"), printJobCmd("after"))
	time.Sleep(500 * time.Millisecond)
	if n := pl.printed("after"); n != 0 {
		t.Errorf("a command published after the lease was lost reached the printer %d times", n)
	}
	if st := w.statesOf(resultTopic("p1"), "after"); len(st) != 0 {
		t.Errorf("a bridge without its lease answered %v", st)
	}
}

// TestPairDatabaseErrorsHidePassword: a database that cannot be reached fails New with an
// error that names the failure and not the password of password_file.
func TestPairDatabaseErrorsHidePassword(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pgpw", "pg-secret-9f3\n")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	for _, dsn := range []string{"postgres://bridge@" + addr + "/plant", "host=127.0.0.1 port=" + strings.Split(addr, ":")[1] + " user=bridge"} {
		cfg, err := ParseConfig([]byte(fmt.Sprintf("broker: {url: \"mqtt://127.0.0.1:1\", client_id: c}\noutbox: {postgres: {dsn: %q, password_file: pgpw}}\nprinters: [{name: p, url: \"http://127.0.0.1:1\"}]\n", dsn)), dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(*cfg)
		if err == nil {
			t.Fatalf("%s: New succeeded with no database", dsn)
		}
		if strings.Contains(err.Error(), "pg-secret-9f3") {
			t.Errorf("%s: the error carries the password: %v", dsn, err)
		}
		if !strings.Contains(err.Error(), "PostgreSQL") {
			t.Errorf("%s: the error does not say what failed: %v", dsn, err)
		}
		// Said once, as a failure to connect: pgx lists the refusal for its TLS try and its
		// plain one, and nothing was created.
		if strings.Count(err.Error(), "connection refused") != 1 || !strings.Contains(err.Error(), "PostgreSQL: connecting: ") {
			t.Errorf("%s: want the refusal once, as connecting: %v", dsn, err)
		}
	}
}

// TestPairPasswordFile: outbox.postgres.password_file is the password the bridge gives
// PostgreSQL, for a role the server asks for it (every other role of the tests is trusted):
// with the right file the bridge opens its outbox there and a printJob is sent; with a wrong
// one New fails saying the password was refused, without either password.
func TestPairPasswordFile(t *testing.T) {
	role := pgtest.PasswordRole(t)
	const wrong = "Wr0ng-bridge-4e2"
	dir := t.TempDir()
	writeFile(t, dir, "good", role.Password+"\n")
	writeFile(t, dir, "bad", wrong+"\n")
	bk := newEmbedded(t)
	pl := startPlant(t, "p1")
	config := func(file string) Config {
		t.Helper()
		cfg, err := ParseConfig([]byte(fmt.Sprintf("broker: {url: %q, client_id: %q}\noutbox: {postgres: {dsn: %q, password_file: %s}, lease_ttl: 5s}\nprinters: [{name: p1, url: %q}]\n",
			bk.URL(), "bridge-"+t.Name(), role.DSN, file, pl.URL)), dir)
		if err != nil {
			t.Fatal(err)
		}
		return *cfg
	}

	_, err := New(config("bad"))
	if err == nil || !strings.Contains(err.Error(), `password authentication failed for user "`+role.Name+`"`) ||
		strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), role.Password) {
		t.Errorf("New with a wrong password_file: %v; want the password refused, without it", err)
	}

	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, config("good"))
	w.waitOnline(1)
	newSender(t, bk.URL()).send(cmdTopic("p1", "printJob"), printJobCmd("pw-1"))
	w.waitStates(resultTopic("p1"), "pw-1", StateQueued, StateSent)
	if n := pl.printed("pw-1"); n != 1 {
		t.Errorf("pw-1 printed %d times, want 1", n)
	}
}

// TestPairHandOver: of two bridges in one process with one configuration, one connects and
// the other stands by (the embedded broker knows one client with the id); a clean stop of the
// active one gives the lease up, and the standby connects and answers commands.
func TestPairHandOver(t *testing.T) {
	dsn := pgtest.DSN(t)
	bk := newEmbedded(t)
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: 2 * waitLimit}
	w := watch(t, bk.URL(), prefix+"/#")
	first := startBridge(t, cfg)
	w.waitOnline(1)
	second := startBridge(t, cfg)
	time.Sleep(300 * time.Millisecond) // the standby has looked at the lease
	if n := w.onlines(); n != 1 {
		t.Fatalf("%d online messages with a standby running, want 1", n)
	}
	ids := 0
	for _, cl := range bk.b.srv.Clients.GetAll() {
		if cl.ID == cfg.Broker.ClientID && !cl.Closed() {
			ids++
		}
	}
	if ids != 1 {
		t.Fatalf("the broker has %d connected clients with the bridge's id, want 1", ids)
	}
	start := time.Now()
	first.stop(t)
	w.waitOnline(2) // the lease outlasts this wait: only giving it up lets the standby in
	t.Logf("handover after a clean stop: %v", time.Since(start).Round(time.Millisecond))
	newSender(t, bk.URL()).send(cmdTopic("p1", "printJob"), printJobCmd("after-handover"))
	w.waitStates(resultTopic("p1"), "after-handover", StateQueued, StateSent)
	second.stop(t)
}

// pausable is a TCP proxy to the database that can stop forwarding, as a paused database
// server or a cut network does: connections stay open, nothing goes through.
type pausable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	paused bool
	conns  []net.Conn
}

func newPausable(t *testing.T, target string) *pausable {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausable{ln: ln, target: target}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			for _, pair := range [][2]net.Conn{{c, d}, {d, c}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer pair[1].Close()
					buf := make([]byte, 32<<10)
					for {
						n, err := pair[0].Read(buf)
						for p.isPaused() {
							time.Sleep(5 * time.Millisecond)
						}
						if n > 0 {
							if _, werr := pair[1].Write(buf[:n]); werr != nil {
								return
							}
						}
						if err != nil {
							return
						}
					}
				}()
			}
		}
	}()
	return p
}

func (p *pausable) isPaused() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.paused }

func (p *pausable) pause(on bool) { p.mu.Lock(); p.paused = on; p.mu.Unlock() }

// TestPairDatabasePaused: the database stops answering the active bridge (every connection
// through a proxy that stops forwarding); the bridge cannot renew its lease, and before the
// lease runs out it stops executing commands and leaves the broker with its Will; Run returns
// ErrLeaseLost within seconds, not held up by the outbox waiting for the database. A command
// published afterwards reaches no printer.
func TestPairDatabasePaused(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skip("the test's database is not named by a postgres:// URL with a host, which the proxy needs")
	}
	px := newPausable(t, u.Host)
	u.Host = px.ln.Addr().String()
	bk := newEmbedded(t)
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: u.String()}, LeaseTTL: 2 * time.Second}
	w := watch(t, bk.URL(), prefix+"/#")
	var opts []Option
	if os.Getenv("MQTTBRIDGE_DEBUG") != "" {
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))))
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

	px.pause(true)
	paused := time.Now()
	// The Will, as soon as the bridge left: before its lease (2 s from its last renewal) ran out.
	eventually(t, "the Will of the fenced bridge", func() bool {
		last := w.last(onlineTopic(prefix))
		return last != nil && onlineStateOf(last) == BridgeOffline
	})
	left := time.Since(paused)
	// A command now reaches no one: the bridge left, and the broker keeps it for the next.
	s.send(cmdTopic("p1", "trigger"), map[string]any{"id": "late"})
	select {
	case err := <-done:
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Run returned %v, want ErrLeaseLost", err)
		}
	case <-time.After(time.Until(paused.Add(10 * time.Second))):
		// The outbox's Close gives up on a database that does not answer within seconds.
		t.Fatal("Run did not return within 10 s of the database's pause, after the bridge lost its lease")
	}
	t.Logf("the database paused: the bridge left the broker after %v; Run returned after %v",
		left.Round(time.Millisecond), time.Since(paused).Round(time.Millisecond))
	px.pause(false)
	if n := pl.Sim.Requests("POST", "/api/v3/printers/{name}/trigger"); n != 0 {
		t.Errorf("the printer received %d triggers after the lease could have run out", n)
	}
	if st := w.statesOf(resultTopic("p1"), "late"); len(st) != 0 {
		t.Errorf("a bridge without its lease answered %v", st)
	}
}

// TestPairOrphanPolicyRefused: --adopt-orphaned-outbox is about files in state_dir; with the
// outbox in PostgreSQL it is a configuration error, not silently ignored.
func TestPairOrphanPolicyRefused(t *testing.T) {
	cfg, err := ParseConfig([]byte("broker: {url: \"mqtt://127.0.0.1:1\", client_id: c}\noutbox: {postgres: {dsn: \"postgres://u@127.0.0.1:1/x\"}}\nprinters: [{name: p, url: \"http://127.0.0.1:1\"}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(*cfg, WithOrphanedOutbox(OrphanPolicy{Ignore: true}))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "outbox.postgres" {
		t.Errorf("New with an orphan policy and outbox.postgres: %v, want a ConfigError naming outbox.postgres", err)
	}
}
