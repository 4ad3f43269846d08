package mqttbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log destination the bridge's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lastOutbox is the last P/outbox message w saw for printer, decoded, and whether it was
// retained; nil when none came.
func (w *watcher) lastOutbox(printer string) (*OutboxState, bool) {
	p := w.last(printerTopic(prefix, printer, topicOutbox))
	if p == nil {
		return nil, false
	}
	var s OutboxState
	if err := json.Unmarshal(p.Payload, &s); err != nil {
		w.t.Fatalf("P/outbox is not JSON: %q", p.Payload)
	}
	return &s, p.Retain
}

// waitOutbox waits until printer's last P/outbox satisfies cond.
func (w *watcher) waitOutbox(printer, what string, cond func(*OutboxState) bool) *OutboxState {
	w.t.Helper()
	var s *OutboxState
	eventually(w.t, what, func() bool {
		s, _ = w.lastOutbox(printer)
		return s != nil && cond(s)
	})
	return s
}

func ids(es []OutboxEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// TestOutboxTopic: P/outbox is published, retained, on every change of the printer's entries,
// with counts per state and the unknown and pending entries (50 at most, the rest counted),
// each entry that becomes unknown is logged at warn level, and a restarted bridge shows what
// its outbox holds.
func TestOutboxTopic(t *testing.T) {
	pl := startPlant(t, "line1", "line2")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	cfg := testConfig(t, bk.URL(), pl, "line1", "line2")
	logs := &syncBuffer{}
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		t.Fatal(err)
	}
	run := runBridge(t, b)
	w.waitOnline(1)
	if s := w.waitOutbox("line1", "P/outbox at connect", func(*OutboxState) bool { return true }); len(s.Counts) != 7 || s.Counts["pending"] != 0 {
		t.Errorf("P/outbox at connect: %+v; want every state counted 0", s)
	}
	s := newSender(t, bk.URL())

	s.send(cmdTopic("line1", "printJob"), printJobCmd("s1"))
	w.waitStates(resultTopic("line1"), "s1", StateQueued, StateSent)
	w.waitOutbox("line1", "s1 counted sent", func(s *OutboxState) bool { return s.Counts["sent"] == 1 && s.Counts["pending"] == 0 })

	pl.mu.Lock()
	pl.hangUp["u1"] = true
	pl.mu.Unlock()
	s.send(cmdTopic("line1", "printJob"), printJobCmd("u1"))
	w.waitStates(resultTopic("line1"), "u1", StateQueued, StateUnknown)
	got := w.waitOutbox("line1", "u1 listed unknown", func(s *OutboxState) bool { return s.Counts["unknown"] == 1 })
	if !equal(ids(got.Unknown), []string{"u1"}) || got.UnknownMore != 0 || got.Counts["sent"] != 1 || got.Unknown[0].Since.IsZero() || got.Unknown[0].AgeSeconds < 0 || got.Unknown[0].Attempts != 1 {
		t.Fatalf("P/outbox with u1 unknown: %+v", got)
	}
	u1Attempts := got.Unknown[0].Attempts
	eventually(t, "the warn line for u1", func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "id=u1") && strings.Contains(l, "unknown") {
				return true
			}
		}
		return false
	})
	if s2, _ := w.lastOutbox("line2"); s2 != nil && (s2.Counts["unknown"] != 0 || s2.Counts["sent"] != 0) {
		t.Errorf("line2's P/outbox counts line1's entries: %+v", s2)
	}

	// With the printer down, commands wait: 50 are listed, the oldest first, and the rest counted.
	pl.setDown(true)
	const waiting = 55
	for i := range waiting {
		s.send(cmdTopic("line1", "printJob"), printJobCmd(fmt.Sprintf("p%02d", i)))
	}
	got = w.waitOutbox("line1", "55 waiting", func(s *OutboxState) bool { return s.Counts["pending"]+s.Counts["sending"] == waiting })
	if len(got.Pending) != min(got.Counts["pending"], outboxListMax) || got.PendingMore != got.Counts["pending"]-len(got.Pending) {
		t.Errorf("pending: %d listed and %d more, of %d", len(got.Pending), got.PendingMore, got.Counts["pending"])
	}
	// Oldest first: in the order they were enqueued, p00 first, whatever retries happened.
	if !slices.IsSorted(ids(got.Pending)) {
		t.Errorf("pending not oldest first: %v", ids(got.Pending))
	}
	if got.Counts["pending"] > outboxListMax && got.PendingMore == 0 {
		t.Errorf("more than %d pending and none counted as more: %+v", outboxListMax, got)
	}

	// The attempts P/outbox lists are what the cancel names.
	s.send(cmdTopic("line1", "cancel"), map[string]any{"id": "u1", "attempts": u1Attempts})
	eventually(t, "u1 cancelled", func() bool {
		got := w.statesOf(resultTopic("line1"), "u1")
		return contains(got, StateDone) && contains(got, StateCancelled)
	})
	w.waitOutbox("line1", "u1 cancelled", func(s *OutboxState) bool {
		return s.Counts["unknown"] == 0 && s.Counts["cancelled"] == 1 && len(s.Unknown) == 0
	})

	pl.setDown(false)
	w.waitOutbox("line1", "all sent", func(s *OutboxState) bool {
		return s.Counts["sent"] == 1+waiting && s.Counts["pending"] == 0 && s.PendingMore == 0
	})

	// A client that subscribes later is handed the last state, retained.
	late := watch(t, bk.URL(), printerTopic(prefix, "line1", topicOutbox))
	late.waitOutbox("line1", "the retained P/outbox", func(s *OutboxState) bool { return s.Counts["sent"] == 1+waiting })
	if _, retained := late.lastOutbox("line1"); !retained {
		t.Error("P/outbox is not retained")
	}

	// A restarted bridge shows what its outbox holds before any command.
	pl.mu.Lock()
	pl.hangUp["u2"] = true
	pl.mu.Unlock()
	s.send(cmdTopic("line1", "printJob"), printJobCmd("u2"))
	w.waitStates(resultTopic("line1"), "u2", StateQueued, StateUnknown)
	run.stop(t)
	bk2 := newEmbedded(t) // a broker that never saw the first bridge's messages
	cfg.Broker.URL = bk2.URL()
	w2 := watch(t, bk2.URL(), prefix+"/#")
	startBridge(t, cfg)
	got = w2.waitOutbox("line1", "the restarted bridge's P/outbox", func(s *OutboxState) bool { return s.Counts["unknown"] == 1 })
	if !equal(ids(got.Unknown), []string{"u2"}) || got.Counts["sent"] != 1+waiting || got.Counts["cancelled"] != 1 {
		t.Errorf("after a restart: %+v", got)
	}
}
