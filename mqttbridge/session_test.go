package mqttbridge

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCommandsWhileStopped: commands published while the bridge is stopped wait in its
// persistent session and go out, in order, once it is back; a clean stop publishes offline.
func TestCommandsWhileStopped(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		r := startBridge(t, cfg)
		w.waitOnline(1)
		r.stop(t)
		if last := w.last(onlineTopic(prefix)); last == nil || onlineStateOf(last) != BridgeOffline {
			t.Fatalf("after a clean stop, online is %v, want offline", last)
		}
		s := newSender(t, bk.URL())
		var ids []string
		for i := range 10 {
			id := fmt.Sprintf("w%02d", i)
			ids = append(ids, id)
			s.send(cmdTopic("line1", "printJob"), printJobCmd(id))
		}
		// The embedded broker hands a message to subscribers after acknowledging it to the
		// publisher; wait until it has, so the bridge's reconnect does not race it.
		eventually(t, "the commands with a live subscriber", func() bool {
			n := 0
			for _, id := range ids {
				w.mu.Lock()
				for _, p := range w.got {
					if p.Topic == cmdTopic("line1", "printJob") && strings.Contains(string(p.Payload), id) {
						n++
						break
					}
				}
				w.mu.Unlock()
			}
			return n == len(ids)
		})
		startBridge(t, cfg)
		for _, id := range ids {
			w.waitStates(resultTopic("line1"), id, StateQueued, StateSent)
		}
		if got := pl.arrivals("line1"); !equal(got, ids) {
			t.Errorf("arrival order %v, want %v", got, ids)
		}
	})
}

// TestCommandsBeforeConnectionUp: the commands a resumed session holds come right after the
// CONNACK, and paho hands them to the bridge before it reports the connection up. Held up
// there until the bridge has received them, it still answers and acknowledges them (the next
// bridge on the session is not handed them again), and each reaches the printer once; they
// were dropped, unanswered and unacknowledged, when the connection's lost channel was made
// only once it was up.
func TestCommandsBeforeConnectionUp(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		r := startBridge(t, cfg)
		w.waitOnline(1)
		r.stop(t)
		s := newSender(t, bk.URL())
		ids := []string{"c0", "c1"}
		for _, id := range ids {
			s.send(cmdTopic("line1", "printJob"), printJobCmd(id))
		}
		eventually(t, "the commands with a live subscriber", func() bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			n := 0
			for _, p := range w.got {
				if p.Topic == cmdTopic("line1", "printJob") {
					n++
				}
			}
			return n == len(ids)
		})
		// paho hands on one message at a time: the second one received means the first was
		// taken (or dropped) before the connection was up.
		recv := &received{msg: "command received", want: len(ids), all: make(chan struct{})}
		b, err := New(cfg, WithLogger(slog.New(recv)), withConnectionUp(func() {
			select {
			case <-recv.all:
			case <-time.After(waitLimit):
				t.Error("the session's commands did not come before the connection was up")
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		r = runBridge(t, b)
		for _, id := range ids {
			w.waitStates(resultTopic("line1"), id, StateQueued, StateSent)
		}
		// Acknowledged: the next bridge on the session gets a marker and no redelivery.
		r.stop(t)
		startBridge(t, cfg)
		s.send(cmdTopic("line1", "printJob"), printJobCmd("marker"))
		w.waitStates(resultTopic("line1"), "marker", StateQueued, StateSent)
		for _, id := range ids {
			if got := w.statesOf(resultTopic("line1"), id); !equal(got, []string{StateQueued, StateSent}) {
				t.Errorf("%s: states %v, want [queued sent] (a redelivery: it was not acknowledged)", id, got)
			}
		}
		for _, id := range ids {
			if n := pl.printed(id); n != 1 {
				t.Errorf("%s reached the printer %d times, want 1", id, n)
			}
		}
	})
}

// TestLossReportedLate: autopaho reports a connection gone on goroutines of its own, which may
// run once the next connection is up. A report that late leaves the commands of the next
// connection alone: they are answered and acknowledged. When each connection had a lost
// channel that the report closed, a late one closed the next connection's, and the bridge
// dropped that connection's commands, unanswered and unacknowledged, until it reconnected.
func TestLossReportedLate(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		var ups atomic.Int32
		second, reported, end := make(chan struct{}), make(chan struct{}), make(chan struct{})
		t.Cleanup(func() { close(end) })
		var once sync.Once
		b, err := New(cfg, withConnectionUp(func() {
			if ups.Add(1) == 2 {
				close(second)
			}
		}), withLateLossReport(func(report func()) {
			select {
			case <-second: // the next connection is up
			case <-end:
				return
			}
			report()
			once.Do(func() { close(reported) })
		}))
		if err != nil {
			t.Fatal(err)
		}
		r := runBridge(t, b)
		w.waitOnline(1)
		bk.restart(t)
		w2 := watch(t, bk.URL(), prefix+"/#")
		eventually(t, "online, status and counters after the restart", func() bool {
			on := w2.last(onlineTopic(prefix))
			return on != nil && onlineStateOf(on) == BridgeOnline && w2.last(prefix+"/line1/status") != nil && w2.last(prefix+"/line1/counters") != nil
		})
		select {
		case <-reported:
		case <-time.After(waitLimit):
			t.Fatal("the lost connection was never reported")
		}
		s := newSender(t, bk.URL())
		s.send(cmdTopic("line1", "printJob"), printJobCmd("after-late-report"))
		w2.waitStates(resultTopic("line1"), "after-late-report", StateQueued, StateSent)
		// Acknowledged: the next bridge on the session gets a marker and no redelivery.
		r.stop(t)
		startBridge(t, cfg)
		s.send(cmdTopic("line1", "printJob"), printJobCmd("marker"))
		w2.waitStates(resultTopic("line1"), "marker", StateQueued, StateSent)
		if got := w2.statesOf(resultTopic("line1"), "after-late-report"); !equal(got, []string{StateQueued, StateSent}) {
			t.Errorf("states %v, want [queued sent] (a redelivery: it was not acknowledged)", got)
		}
		if n := pl.printed("after-late-report"); n != 1 {
			t.Errorf("the command reached the printer %d times, want 1", n)
		}
	})
}

// received is a log handler that closes all once want records with message msg came.
type received struct {
	msg  string
	want int
	all  chan struct{}
	mu   sync.Mutex
	n    int
}

func (h *received) Enabled(context.Context, slog.Level) bool { return true }
func (h *received) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *received) WithGroup(string) slog.Handler            { return h }
func (h *received) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n++; h.n == h.want {
		close(h.all)
	}
	return nil
}
