package mqttbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// runFor runs a bridge of cfg and returns what Run returned within takeoverLimit; a bridge
// still running then is a failure (it did not refuse).
func runFor(t *testing.T, cfg Config) error {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := runBridge(t, b)
	select {
	case err := <-r.done:
		r.cancel()
		r.cancel = nil
		return err
	case <-time.After(takeoverLimit):
		t.Fatalf("a second bridge under %s still runs after %v; want it refused", prefix, takeoverLimit)
		return nil
	}
}

// onlineOf decodes the last message on the online topic.
func onlineOf(t *testing.T, w *watcher) OnlineState {
	t.Helper()
	p := w.last(onlineTopic(prefix))
	if p == nil {
		t.Fatal("nothing on the online topic")
	}
	var s OnlineState
	if err := json.Unmarshal(p.Payload, &s); err != nil {
		t.Fatalf("online payload %q: %v", p.Payload, err)
	}
	return s
}

// TestSecondBridgeRefused: with a bridge online, a second one with the same configuration
// (the same client id, its own state_dir) and a third with another client id under the same
// topic prefix refuse to start, naming the instance online, and the first one goes on
// undisturbed: it connects once and prints each command once. Before, the second took the
// session from the first again and again and both printed the commands.
func TestSecondBridgeRefused(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		first := startBridge(t, cfg)
		w.waitOnline(1)
		on := onlineOf(t, w)
		if on.State != BridgeOnline || on.ClientID != cfg.Broker.ClientID || on.Pair || on.Instance == "" {
			t.Fatalf("online payload %+v; want online, the client id, an instance, not a pair", on)
		}

		same := cfg
		same.StateDir = t.TempDir()
		err := runFor(t, same)
		if !errors.Is(err, ErrAnotherBridgeOnline) || !strings.Contains(err.Error(), on.Instance) ||
			!strings.Contains(err.Error(), "same client_id") {
			t.Fatalf("the same client id: Run: %v; want ErrAnotherBridgeOnline naming %s and the client id", err, on.Instance)
		}
		other := cfg
		other.StateDir = t.TempDir()
		other.Broker.ClientID += "-other"
		err = runFor(t, other)
		if !errors.Is(err, ErrAnotherBridgeOnline) || !strings.Contains(err.Error(), on.Instance) ||
			!strings.Contains(err.Error(), "topic_prefix") {
			t.Fatalf("another client id: Run: %v; want ErrAnotherBridgeOnline naming %s and the topic prefix", err, on.Instance)
		}

		s := newSender(t, bk.URL())
		for i := range 5 {
			s.send(cmdTopic("line1", "printJob"), printJobCmd(fmt.Sprintf("r%d", i)))
		}
		for i := range 5 {
			w.waitStates(resultTopic("line1"), fmt.Sprintf("r%d", i), StateQueued, StateSent)
		}
		for i := range 5 {
			if n := pl.printed(fmt.Sprintf("r%d", i)); n != 1 {
				t.Errorf("r%d printed %d times", i, n)
			}
		}
		if n := w.onlines(); n != 1 {
			t.Errorf("the first bridge said online %d times; its session was disturbed", n)
		}
		first.stop(t)
		off := onlineOf(t, w)
		if off.State != BridgeOffline || off.Instance != on.Instance {
			t.Errorf("after a clean stop: %+v, want offline for instance %s", off, on.Instance)
		}
		// Offline now: a bridge starts again.
		startBridge(t, same)
		w.waitOnline(2)
	})
}

// holder is a process holding the online topic as a bridge does: "online" retained, and an
// "offline" Will.
type holder struct {
	conn net.Conn
	cli  *paho.Client
}

func holdOnline(t *testing.T, brokerURL string, online, will []byte) *holder {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(brokerURL, "mqtt://"))
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{conn: conn, cli: paho.NewClient(paho.ClientConfig{ClientID: "holder", Conn: conn})}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	zero := uint32(0)
	cp := &paho.Connect{ClientID: "holder", CleanStart: true, KeepAlive: 30}
	if will != nil {
		cp.WillMessage = &paho.WillMessage{Topic: onlineTopic(prefix), Payload: will, QoS: 1, Retain: true}
		cp.WillProperties = &paho.WillProperties{WillDelayInterval: &zero}
	}
	if _, err := h.cli.Connect(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cli.Publish(ctx, &paho.Publish{Topic: onlineTopic(prefix), Payload: online, QoS: 1, Retain: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.die(); <-h.cli.Done() })
	return h
}

// die drops the connection without a DISCONNECT, as a killed process does: the broker
// publishes the Will.
func (h *holder) die() { _ = h.conn.Close() }

// TestOnlineHeldByTheDeadOrTheOld: a retained "online" of a process that dies while the bridge
// starts is followed by its Will, and the bridge starts; a plain "online", as versions without
// an instance published it, is refused as a live bridge. Both brokers.
func TestOnlineHeldByTheDeadOrTheOld(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		dying := OnlineState{State: BridgeOnline, Instance: "elsewhere/1/DYING", ClientID: cfg.Broker.ClientID}
		on, _ := json.Marshal(dying)
		dying.State = BridgeOffline
		off, _ := json.Marshal(dying)
		h := holdOnline(t, bk.URL(), on, off)
		eventually(t, "the holder's online", func() bool { return w.last(onlineTopic(prefix)) != nil })
		go func() {
			time.Sleep(onlineHeldWait / 10)
			h.die()
		}()
		r := startBridge(t, cfg)
		eventually(t, "the bridge online once the holder's Will came", func() bool {
			on := onlineOf(t, w)
			return on.State == BridgeOnline && on.Instance != "elsewhere/1/DYING"
		})
		r.stop(t)

		holdOnline(t, bk.URL(), []byte(BridgeOnline), nil)
		eventually(t, "the old payload", func() bool {
			p := w.last(onlineTopic(prefix))
			return p != nil && string(p.Payload) == BridgeOnline
		})
		cfg.StateDir = t.TempDir()
		err := runFor(t, cfg)
		if !errors.Is(err, ErrAnotherBridgeOnline) || !strings.Contains(err.Error(), "older version") {
			t.Fatalf("Run: %v; want ErrAnotherBridgeOnline naming an older version", err)
		}
	})
}

// TestPairOnlineRefused: a pair's member online under the prefix lets another member of its
// pair (the same client id, outbox.postgres) stand by, but refuses a bridge with its client id
// and no outbox.postgres, and a member of another pair (another client id) under the same
// prefix. Both brokers.
func TestPairOnlineRefused(t *testing.T) {
	pgtest.DSN(t) // skips without PostgreSQL
	eachBroker(t, func(t *testing.T, bk testBroker) { testPairOnlineRefused(t, bk, pgtest.DSN(t)) })
}

func testPairOnlineRefused(t *testing.T, bk testBroker, dsn string) {
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: 2 * time.Second}
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, cfg)
	w.waitOnline(1)
	on := onlineOf(t, w)
	if !on.Pair || on.ClientID != cfg.Broker.ClientID {
		t.Fatalf("online payload %+v; want the pair's client id and pair true", on)
	}

	lone := cfg
	lone.Outbox = OutboxConfig{}
	lone.StateDir = t.TempDir()
	err := runFor(t, lone)
	if !errors.Is(err, ErrAnotherBridgeOnline) || !strings.Contains(err.Error(), on.Instance) || !strings.Contains(err.Error(), "pair") {
		t.Fatalf("the pair's client id without outbox.postgres: Run: %v; want ErrAnotherBridgeOnline naming %s and the pair", err, on.Instance)
	}
	otherPair := cfg
	otherPair.Broker.ClientID += "-b"
	err = runFor(t, otherPair)
	if !errors.Is(err, ErrAnotherBridgeOnline) || !strings.Contains(err.Error(), on.Instance) {
		t.Fatalf("another pair under the prefix: Run: %v; want ErrAnotherBridgeOnline naming %s", err, on.Instance)
	}
	if n := w.onlines(); n != 1 {
		t.Errorf("the active bridge said online %d times; its session was disturbed", n)
	}
}

// TestTwoBridgesOneClientID: two bridges started at the same moment with one configuration
// (one client id, each its own state_dir, no PostgreSQL): one of them stops, refused at start
// or taken over, and the other bridges on, printing each later command once. Before, the two
// took the session from each other until stopped and printed commands twice.
func TestTwoBridgesOneClientID(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		second := cfg
		second.StateDir = t.TempDir()
		var rs []*running
		for _, c := range []Config{cfg, second} {
			b, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, runBridge(t, b))
		}
		var survivor *running
		select {
		case err := <-rs[0].done:
			rs[0].cancel()
			rs[0].cancel = nil
			survivor = rs[1]
			checkStopped(t, err)
		case err := <-rs[1].done:
			rs[1].cancel()
			rs[1].cancel = nil
			survivor = rs[0]
			checkStopped(t, err)
		case <-time.After(takeoverLimit):
			t.Fatalf("both bridges still run %v after they started with one client id", takeoverLimit)
		}
		s := newSender(t, bk.URL())
		for i := range 10 {
			s.send(cmdTopic("line1", "printJob"), printJobCmd(fmt.Sprintf("t%d", i)))
		}
		for i := range 10 {
			w.waitStates(resultTopic("line1"), fmt.Sprintf("t%d", i), StateQueued, StateSent)
		}
		for i := range 10 {
			if n := pl.printed(fmt.Sprintf("t%d", i)); n != 1 {
				t.Errorf("t%d printed %d times", i, n)
			}
		}
		select {
		case err := <-survivor.done:
			survivor.cancel = nil
			t.Fatalf("the other bridge stopped too: %v", err)
		default:
		}
	})
}

func checkStopped(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrSessionTakenOver) && !errors.Is(err, ErrAnotherBridgeOnline) {
		t.Fatalf("Run: %v; want ErrSessionTakenOver or ErrAnotherBridgeOnline", err)
	}
	t.Logf("one bridge stopped: %v", err)
}
