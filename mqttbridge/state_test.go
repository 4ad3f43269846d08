package mqttbridge

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/outbox"
)

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://10.0.0.1:8631":        "http://10.0.0.1:8631",
		"http://10.0.0.1:8631/":       "http://10.0.0.1:8631",
		"HTTP://Printer.Plant:8631//": "http://printer.plant:8631",
		"http://host:80/":             "http://host",
		"https://HOST:443":            "https://host",
		"https://host:80":             "https://host:80",
		"http://[FE80::1]:80/":        "http://[fe80::1]",
		"http://[::1]:8631":           "http://[::1]:8631",
		"http://host/Line3/":          "http://host/Line3",
		"http://host/a%2Fb/":          "http://host/a%2Fb",
	} {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStateFileFollowsNoSpelling: every spelling of one controller names one outbox file, so
// a command queued under one is sent and remembered under another.
func TestStateFileFollowsNoSpelling(t *testing.T) {
	want := StateFile("d", "http://host:8631")
	for _, s := range []string{"HTTP://host:8631", "http://HOST:8631/", "http://host:8631//", "Http://Host:8631"} {
		if got := StateFile("d", s); got != want {
			t.Errorf("StateFile(%q) = %s, want %s (the file of http://host:8631)", s, got, want)
		}
	}
	if StateFile("d", "http://host") != StateFile("d", "http://host:80/") {
		t.Error("the default port names another file")
	}
	cfg := Config{Broker: BrokerConfig{URL: "mqtt://127.0.0.1:1", ClientID: "c"}, StateDir: "s", Printers: []PrinterConfig{
		{Name: "a", URL: "HTTP://host:8631", Printer: "a"},
		{Name: "b", URL: "http://host:8631/", Printer: "a"},
	}}
	if err := cfg.Validate(); err == nil {
		t.Error("one printer on one controller under two spellings was taken as two printers")
	}
}

// queueOrphan leaves an outbox file named as a version that did not normalise URLs named it
// for spelling, with one pending entry, and returns its path.
func queueOrphan(t *testing.T, dir, spelling string) string {
	t.Helper()
	f := stateFileOf(dir, spelling)
	ob, err := outbox.Open(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Enqueue(context.Background(), outbox.Intent{ID: "order-1", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "MEDIUM"}}); err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestOrphanedOutbox: an outbox in state_dir that no configured controller owns and that
// still holds a pending entry stops New (the file, its URL, its counts), unless the caller
// says to adopt it into a configured controller or to ignore it.
func TestOrphanedOutbox(t *testing.T) {
	pl := startPlant(t, "line1")
	spelling := strings.Replace(pl.URL, "http://", "HTTP://", 1)
	cfg := func(dir string) Config {
		return Config{Broker: BrokerConfig{URL: "mqtt://127.0.0.1:1", ClientID: "c"}, StateDir: dir,
			Printers: []PrinterConfig{{Name: "line1", URL: spelling, Printer: "line1"}}}
	}

	t.Run("refused", func(t *testing.T) {
		dir := t.TempDir()
		orphan := queueOrphan(t, dir, spelling)
		b, err := New(cfg(dir))
		var oe *OrphanedOutboxError
		if !errors.As(err, &oe) {
			if b != nil {
				_ = b.Close()
			}
			t.Fatalf("New: %v; want an *OrphanedOutboxError", err)
		}
		msg := err.Error()
		for _, w := range []string{orphan, spelling, "1 pending", "0 unknown", "--adopt-orphaned-outbox"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not name %q", msg, w)
			}
		}
		if len(oe.Orphans) != 1 || oe.Orphans[0].Pending != 1 || oe.Orphans[0].URL != spelling {
			t.Errorf("orphans %+v", oe.Orphans)
		}
	})

	t.Run("adopted", func(t *testing.T) {
		dir := t.TempDir()
		orphan := queueOrphan(t, dir, spelling)
		// The orphan's ledger holds an abortPrint id; it goes with the outbox.
		led, err := openLedger(ledgerFile(orphan))
		if err != nil {
			t.Fatal(err)
		}
		if err := led.putAbort(abortRecord{Printer: "line1", ID: "abort-1", State: StateDone}); err != nil {
			t.Fatal(err)
		}
		_ = led.close()
		b, err := New(cfg(dir), WithOrphanedOutbox(OrphanPolicy{AdoptInto: pl.URL + "/"}))
		if err != nil {
			t.Fatal(err)
		}
		ob := b.printers["line1"].ctl.ob
		if e, err := ob.Get("order-1"); err != nil || e.State != outbox.Pending {
			t.Errorf("the adopted entry: %+v, %v; want it pending in the controller's outbox", e, err)
		}
		if r, err := b.printers["line1"].ctl.led.abort("line1", "abort-1"); err != nil || r == nil || r.State != StateDone {
			t.Errorf("the adopted abortPrint record: %+v, %v", r, err)
		}
		_ = b.Close()
		// Now the controller owns it: a second start has nothing to ask.
		b, err = New(cfg(dir))
		if err != nil {
			t.Fatalf("a start after the adoption: %v", err)
		}
		_ = b.Close()
	})

	t.Run("adopted after a start that ignored it", func(t *testing.T) {
		dir := t.TempDir()
		orphan := queueOrphan(t, dir, spelling)
		led, err := openLedger(ledgerFile(orphan))
		if err != nil {
			t.Fatal(err)
		}
		if err := led.putAbort(abortRecord{Printer: "line1", ID: "abort-1", State: StateDone}); err != nil {
			t.Fatal(err)
		}
		_ = led.close()
		// A start that ignores the orphan makes the controller's own (empty) outbox and ledger.
		b, err := New(cfg(dir), WithOrphanedOutbox(OrphanPolicy{Ignore: true}))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.printers["line1"].ctl.led.putAbort(abortRecord{Printer: "line1", ID: "abort-2", State: StateFailed}); err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
		b, err = New(cfg(dir), WithOrphanedOutbox(OrphanPolicy{AdoptInto: pl.URL}))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for id, want := range map[string]string{"abort-1": StateDone, "abort-2": StateFailed} {
			if r, err := b.printers["line1"].ctl.led.abort("line1", id); err != nil || r == nil || r.State != want {
				t.Errorf("%s after the adoption: %+v, %v; want %s", id, r, err, want)
			}
		}
		if _, err := os.Stat(ledgerFile(orphan)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the orphan's ledger is left behind: %v", err)
		}
	})

	t.Run("adopted into a controller with entries", func(t *testing.T) {
		dir := t.TempDir()
		queueOrphan(t, dir, spelling)
		queueOrphan(t, dir, pl.URL)
		_, err := New(cfg(dir), WithOrphanedOutbox(OrphanPolicy{AdoptInto: pl.URL}))
		var oe *OrphanedOutboxError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), "already holds 1 entries") {
			t.Fatalf("New: %v; want a refusal, the target holding entries", err)
		}
	})

	t.Run("adopted into no configured controller", func(t *testing.T) {
		dir := t.TempDir()
		queueOrphan(t, dir, spelling)
		_, err := New(cfg(dir), WithOrphanedOutbox(OrphanPolicy{AdoptInto: "http://elsewhere:8631"}))
		if err == nil || !strings.Contains(err.Error(), "http://elsewhere:8631 is not the url of a configured printer") {
			t.Fatalf("New: %v", err)
		}
	})

	t.Run("ignored", func(t *testing.T) {
		dir := t.TempDir()
		orphan := queueOrphan(t, dir, spelling)
		var log testkit.SyncBuffer
		b, err := New(cfg(dir), WithOrphanedOutbox(OrphanPolicy{Ignore: true}),
			WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
		if !strings.Contains(log.String(), orphan) || !strings.Contains(log.String(), "pending=1") {
			t.Errorf("log %q: want a warning naming the ignored file", log.String())
		}
		if _, err := os.Stat(orphan); err != nil {
			t.Errorf("the ignored file: %v", err)
		}
	})

	t.Run("settled orphans do not stop a start", func(t *testing.T) {
		dir := t.TempDir()
		ob, err := outbox.Open(filepath.Join(dir, "old-00000000.outbox"), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = ob.Close()
		b, err := New(cfg(dir))
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
	})

	t.Run("its URL recorded", func(t *testing.T) {
		dir := t.TempDir()
		other := "http://127.0.0.1:1/"
		b, err := New(Config{Broker: BrokerConfig{URL: "mqtt://127.0.0.1:1", ClientID: "c"}, StateDir: dir,
			Printers: []PrinterConfig{{Name: "gone", URL: other, Printer: "gone"}}})
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
		ob, err := outbox.Open(StateFile(dir, other), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = ob.Enqueue(context.Background(), outbox.Intent{ID: "x", Printer: "gone", Job: labelprinter.PrintJob{LabelName: "A"}})
		_ = ob.Close()
		// The printer leaves the configuration: the file is named by the URL recorded beside it.
		_, err = New(cfg(dir))
		if err == nil || !strings.Contains(err.Error(), "(http://127.0.0.1:1)") {
			t.Fatalf("New: %v; want the orphan named by its recorded URL", err)
		}
	})
}
