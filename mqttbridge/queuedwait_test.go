package mqttbridge

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// TestQueuedResultsWaitWithoutGoroutines: 1,000 commands whose queued results wait for the
// broker hold no goroutine each (before: one each, 8 KB of stack apiece under a flood), and
// each command's channel is closed once the broker took its result.
func TestQueuedResultsWaitWithoutGoroutines(t *testing.T) {
	cfg := Config{
		Broker:       BrokerConfig{URL: "mqtt://127.0.0.1:1", ClientID: "queued-wait"},
		StateDir:     t.TempDir(),
		PollInterval: time.Second,
		Printers:     []PrinterConfig{{Name: "line1", URL: "http://127.0.0.1:1", Printer: "line1"}},
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := b.printers["line1"]
	ctl := p.ctl
	before := runtime.NumGoroutine()
	var waiters []*waiter
	now := time.Now()
	for i := range 1000 {
		key := entryKey{ctl, outboxKey(p, fmt.Sprintf("q%04d", i))}
		w := &waiter{done: make(chan struct{})}
		b.mu.Lock()
		b.waiting[key] = w
		b.mu.Unlock()
		b.entryChanged(ctl, outbox.Entry{Intent: outbox.Intent{ID: key.id, Printer: p.remote}, State: outbox.Pending, Enqueued: now, Updated: now})
		waiters = append(waiters, w)
	}
	if grew := runtime.NumGoroutine() - before; grew > 10 {
		t.Errorf("1,000 queued results waiting for the broker hold %d more goroutines", grew)
	}
	for _, w := range waiters[:1] {
		select {
		case <-w.done:
			t.Fatal("a command's channel was closed before the broker took its result")
		default:
		}
	}
	// The broker takes every message, as the publisher reports it; then each channel is closed.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.pub.mu.Lock()
	taken := b.pub.q
	b.pub.q = nil
	b.pub.mu.Unlock()
	for _, m := range taken {
		if m.done != nil {
			close(m.done)
		}
	}
	for i, w := range waiters {
		select {
		case <-w.done:
		case <-time.After(waitLimit):
			t.Fatalf("command %d: its channel is open after the broker took its result", i)
		}
	}
}
