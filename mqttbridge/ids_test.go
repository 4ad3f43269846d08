package mqttbridge

import (
	"context"
	"errors"
	"strings"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// TestIDsBelongToAPrinter reproduces the report: two printers behind one controller, the same
// id on both. Each is its own command, queued and sent to its own printer, with results that
// show the caller's id; a redelivery on either is a duplicate; cancel on one printer does not
// reach the other's command.
func TestIDsBelongToAPrinter(t *testing.T) {
	pl := startPlant(t, "line1", "line2")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	b, err := New(testConfig(t, bk.URL(), pl, "line1", "line2"))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), printJobCmd("o-1"))
	w.waitStates(resultTopic("line1"), "o-1", StateQueued, StateSent)
	s.send(cmdTopic("line2", "printJob"), printJobCmd("o-1"))
	w.waitStates(resultTopic("line2"), "o-1", StateQueued, StateSent)
	s.send(cmdTopic("line1", "trigger"), map[string]any{"id": "t-1"})
	s.send(cmdTopic("line2", "trigger"), map[string]any{"id": "t-1"})
	w.waitStates(resultTopic("line1"), "t-1", StateQueued, StateSent)
	w.waitStates(resultTopic("line2"), "t-1", StateQueued, StateSent)
	for _, p := range []string{"line1", "line2"} {
		if got := pl.arrivals(p); !equal(got, []string{"o-1"}) {
			t.Errorf("%s received %v, want o-1 once", p, got)
		}
		if c, _ := pl.Sim.Counters(p); c.Triggers != 1 {
			t.Errorf("%s counted %d triggers, want 1", p, c.Triggers)
		}
	}
	// Sent again on each printer: duplicates, nothing sent.
	s.send(cmdTopic("line1", "printJob"), printJobCmd("o-1"))
	s.send(cmdTopic("line2", "printJob"), printJobCmd("o-1"))
	w.waitStates(resultTopic("line1"), "o-1", StateQueued, StateSent, StateDuplicate)
	w.waitStates(resultTopic("line2"), "o-1", StateQueued, StateSent, StateDuplicate)
	if n := pl.printed("o-1"); n != 2 {
		t.Errorf("o-1 reached the printers %d times, want 2 (once each)", n)
	}
	// A cancel of a sent one fails, naming the caller's id.
	s.send(cmdTopic("line2", "cancel"), map[string]any{"id": "o-1", "attempts": 1})
	w.waitStates(resultTopic("line2"), "o-1", StateQueued, StateSent, StateDuplicate, StateFailed)
	if rs := w.results(resultTopic("line2")); !strings.Contains(rs[len(rs)-1].Error, `"o-1" is sent; only pending and unknown entries can be cancelled`) {
		t.Errorf("cancel of a sent command: %q", rs[len(rs)-1].Error)
	}
	// The outbox holds one entry per printer.
	for _, p := range []string{"line1", "line2"} {
		if e, err := b.ctls[0].ob.Get(p + "/o-1"); err != nil || e.Printer != p || e.State != outbox.Sent {
			t.Errorf("%s's o-1 in the outbox: %+v, %v", p, e, err)
		}
	}
}

// TestIDsOfAnOlderVersion: an outbox written by a version that keyed entries by the id alone
// still holds its ids for their printer: a redelivered command is a duplicate, cancel finds
// it, and the same id on another printer is a new command.
func TestIDsOfAnOlderVersion(t *testing.T) {
	pl := startPlant(t, "line1", "line2")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	cfg := testConfig(t, bk.URL(), pl, "line1", "line2")
	ob, err := outbox.Open(StateFile(cfg.StateDir, pl.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"old-1", "old-2"} {
		if _, err := ob.Enqueue(context.Background(), outbox.Intent{ID: id, Printer: "line1", Kind: outbox.KindDeselect}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ob.Enqueue(context.Background(), outbox.Intent{ID: "line1/x", Printer: "line2", Job: labelprinter.PrintJob{LabelName: "A"}}); err != nil {
		t.Fatal(err)
	}
	if err := ob.Cancel("line1/x"); err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	startBridge(t, cfg)
	w.waitOnline(1)
	// The old entries are sent (deselects) and reported under their ids.
	w.waitStates(resultTopic("line1"), "old-1", StateSent)
	w.waitStates(resultTopic("line1"), "old-2", StateSent)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), map[string]any{"id": "old-1"})
	w.waitStates(resultTopic("line1"), "old-1", StateSent, StateDuplicate)
	s.send(cmdTopic("line1", "cancel"), map[string]any{"id": "old-2", "attempts": 1})
	w.waitStates(resultTopic("line1"), "old-2", StateSent, StateFailed)
	if rs := w.results(resultTopic("line1")); !strings.Contains(rs[len(rs)-1].Error, "only pending and unknown") {
		t.Errorf("cancel of an old sent entry: %+v, want it found and refused as sent", rs[len(rs)-1])
	}
	s.send(cmdTopic("line2", "printJob"), printJobCmd("old-1"))
	w.waitStates(resultTopic("line2"), "old-1", StateQueued, StateSent)
	// An old entry whose id has a slash is reported under its whole id.
	s.send(cmdTopic("line2", "cancel"), map[string]any{"id": "line1/x", "attempts": 1})
	w.waitStates(resultTopic("line2"), "line1/x", StateFailed)
	if n := pl.printed("<deselect>"); n != 2 {
		t.Errorf("%d deselects reached the printer, want 2", n)
	}
	if got := pl.arrivals("line2"); !equal(got, []string{"old-1"}) {
		t.Errorf("line2 received %v, want old-1", got)
	}
}

// TestIDTooLongWithItsPrinter: an id that fits alone but not with its printer's name is
// refused as invalid, naming both.
func TestIDTooLongWithItsPrinter(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	id := strings.Repeat("x", 251)
	s.send(cmdTopic("line1", "trigger"), map[string]any{"id": id})
	w.waitStates(resultTopic("line1"), id, StateInvalid)
	if rs := w.results(resultTopic("line1")); !strings.Contains(rs[0].Error, `"id" and the printer's name "line1" are together longer than 255 bytes`) {
		t.Errorf("error %q", rs[0].Error)
	}
	id = strings.Repeat("x", 250)
	s.send(cmdTopic("line1", "trigger"), map[string]any{"id": id})
	w.waitStates(resultTopic("line1"), id, StateQueued, StateRejected) // nothing selected
}

// TestPrinterNamesOneSlashApart: printers "a" and "a/b" behind one controller would hold the
// command "b/x" of the one and "x" of the other under one outbox ID ("a/b/x"), so the second
// would be answered duplicate and never printed: such a configuration is refused, naming both;
// on two controllers (two outbox files) it is taken.
func TestPrinterNamesOneSlashApart(t *testing.T) {
	const head = "broker: {url: \"mqtt://b:1883\", client_id: c}\nstate_dir: s\nprinters:\n"
	for _, tc := range []struct{ printers, field string }{
		{"  - {name: p, url: \"http://x\", printer: a}\n  - {name: q, url: \"HTTP://x/\", printer: a/b}\n", "printers[1].printer"},
		{"  - {name: p, url: \"http://x\", printer: a/b/c}\n  - {name: q, url: \"http://x\", printer: a}\n", "printers[1].printer"},
		{"  - {name: p, url: \"http://x\"}\n  - {name: q, url: \"http://x\", printer: /a}\n", "printers[1].printer"},
	} {
		_, err := ParseConfig([]byte(head+tc.printers), t.TempDir())
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(err.Error(), "one name and a slash apart") {
			t.Errorf("%q: %v; want a ConfigError for %s", tc.printers, err, tc.field)
		}
	}
	for _, ok := range []string{
		"  - {name: p, url: \"http://x\", printer: a}\n  - {name: q, url: \"http://y\", printer: a/b}\n",
		"  - {name: p, url: \"http://x\", printer: a}\n  - {name: q, url: \"http://x\", printer: ab}\n",
	} {
		if _, err := ParseConfig([]byte(head+ok), t.TempDir()); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
