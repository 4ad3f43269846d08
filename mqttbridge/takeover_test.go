package mqttbridge

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// takeoverLimit bounds how long a bridge may take to stop once its session is taken over; it
// stops within a second here, and the bound leaves room for a loaded machine.
const takeoverLimit = 20 * time.Second

// intruder is another process connected with a bridge's client id, as a second bridge or an
// older version of it: it connects again at once whenever it loses its connection.
type intruder struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	connects int
	up       bool // connected now
}

func startIntruder(t *testing.T, brokerURL, clientID string) *intruder {
	in := &intruder{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(in.done)
		for {
			select {
			case <-in.stop:
				return
			default:
			}
			conn, err := net.Dial("tcp", strings.TrimPrefix(brokerURL, "mqtt://"))
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			cli := paho.NewClient(paho.ClientConfig{ClientID: clientID, Conn: conn})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			ca, err := cli.Connect(ctx, &paho.Connect{ClientID: clientID, KeepAlive: 30})
			cancel()
			if err != nil || ca.ReasonCode != 0 {
				_ = conn.Close()
				<-cli.Done()
				continue
			}
			in.mu.Lock()
			in.connects++
			in.up = true
			in.mu.Unlock()
			select {
			case <-cli.Done():
				in.mu.Lock()
				in.up = false
				in.mu.Unlock()
			case <-in.stop:
				_ = cli.Disconnect(&paho.Disconnect{})
				<-cli.Done()
				return
			}
		}
	}()
	t.Cleanup(func() { close(in.stop); <-in.done })
	return in
}

func (in *intruder) count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.connects
}

func (in *intruder) isUp() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.up
}

// TestSessionTakenOverStops: another process that connects with the bridge's client_id and
// connects again whenever it loses the connection stops the bridge: Run returns
// ErrSessionTakenOver naming the client id, an error-level line names it, and the bridge does
// not connect again. The embedded broker says so (DISCONNECT 0x8E); mosquitto 2.0.11 closes
// the connection without a word, and the bridge tells it from the connections it loses one
// after another just after they were made. Before, the two took the session from each other
// until stopped.
func TestSessionTakenOverStops(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		var logs syncBuffer
		b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		r := runBridge(t, b)
		w.waitOnline(1)
		start := time.Now()
		in := startIntruder(t, bk.URL(), cfg.Broker.ClientID)
		select {
		case err = <-r.done:
			r.cancel()
			r.cancel = nil
			t.Logf("Run returned %v after the other process first connected", time.Since(start).Round(time.Millisecond))
		case <-time.After(takeoverLimit):
			t.Fatalf("the bridge still runs %v after another process took its session (%d connects of the other)", takeoverLimit, in.count())
		}
		if !errors.Is(err, ErrSessionTakenOver) || !strings.Contains(err.Error(), cfg.Broker.ClientID) {
			t.Fatalf("Run: %v; want ErrSessionTakenOver naming %q", err, cfg.Broker.ClientID)
		}
		// Which rule stopped it: the broker's reason where it sends one, the run of connections
		// lost just after they were made where it does not.
		if want := takeoverRule(t, bk); !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %v; want the rule %q to have stopped it on this broker", err, want)
		}
		line := ""
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "taken over") {
				line = l
			}
		}
		if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "client_id="+cfg.Broker.ClientID) {
			t.Errorf("no error-level line naming the client id; the log:\n%s", logs.String())
		}
		// Run has returned, so its connection manager has too (goleak checks): the other
		// process, once it has connected again after the bridge's last takeover, keeps the
		// session.
		eventually(t, "the other process connected", in.isUp)
		n := in.count()
		time.Sleep(300 * time.Millisecond)
		if in.count() != n || !in.isUp() {
			t.Errorf("the other process lost its connection %d times after the bridge stopped", in.count()-n)
		}
	})
}

// takeoverRule is the wording of the rule that stops a bridge whose session another process
// took on bk: the embedded broker sends DISCONNECT 0x8E; mosquitto 2.0.11 closes the connection
// without a reason. A mosquitto of another version is asked for either.
func takeoverRule(t *testing.T, bk testBroker) string {
	t.Helper()
	const (
		reason = "DISCONNECT reason 0x8E"
		run    = "connections in a row"
	)
	switch bk := bk.(type) {
	case *embeddedBroker:
		return reason
	case *mosquitto:
		out, _ := exec.Command(bk.bin, "-h").CombinedOutput()
		if strings.Contains(string(out), "mosquitto version 2.0.11\n") {
			return run
		}
		t.Logf("%s: not 2.0.11; either rule may stop the bridge", strings.SplitN(string(out), "\n", 2)[0])
	}
	return ErrSessionTakenOver.Error()
}

// TestTakeoverWatch: the rule that tells a session taken over from an outage.
func TestTakeoverWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tw := takeoverWatch{clientID: "c1"}
	tw.up(t0)
	tw.serverDisconnect(reasonSessionTakenOver)
	if err := tw.down(t0.Add(time.Hour)); !errors.Is(err, ErrSessionTakenOver) || !strings.Contains(err.Error(), `"c1"`) || !strings.Contains(err.Error(), "0x8E") {
		t.Fatalf("0x8E: %v", err)
	}
	now := t0
	lose := func(after time.Duration, reason *byte) error {
		tw.up(now)
		if reason != nil {
			tw.serverDisconnect(*reason)
		}
		now = now.Add(after)
		return tw.down(now)
	}
	for i := range quickLosses - 1 {
		if err := lose(time.Millisecond, nil); err != nil {
			t.Fatalf("quick loss %d: %v", i+1, err)
		}
	}
	// A connection that lived, or a DISCONNECT with another reason, is an outage: it starts
	// the count again.
	if err := lose(quickLoss, nil); err != nil {
		t.Fatal(err)
	}
	for range quickLosses - 1 {
		_ = lose(time.Millisecond, nil)
	}
	quota := byte(0x97)
	if err := lose(time.Millisecond, &quota); err != nil {
		t.Fatal(err)
	}
	for i := range quickLosses {
		err := lose(time.Millisecond, nil)
		if (err != nil) != (i == quickLosses-1) {
			t.Fatalf("quick loss %d of %d in a row: %v", i+1, quickLosses, err)
		}
		if err != nil && (!errors.Is(err, ErrSessionTakenOver) || !strings.Contains(err.Error(), "same client_id") || !strings.Contains(err.Error(), `"c1"`)) {
			t.Fatalf("error %v names neither the likely cause nor the client id", err)
		}
	}
}
