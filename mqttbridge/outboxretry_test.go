package mqttbridge

import (
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutboxWriteFailureRetried: an outbox that cannot be written (here a file-size limit,
// which makes every write past it fail with EFBIG, as a full disk fails with ENOSPC) holds the
// command in place, retried with back-off and logged at error level each time, and the
// command behind it waits its turn; once the limit is lifted, each goes through exactly once,
// in order.
//
// The limit (RLIMIT_FSIZE) is the test process's own for a few seconds: nothing else here
// writes a file meanwhile (the broker, the printer and the bridge's logs live in memory), and
// SIGXFSZ is ignored so a write past it fails instead of killing the process. Hence these
// tests never run in parallel: another test's outbox would fail its writes too.
func TestOutboxWriteFailureRetried(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	var logs lockedBuffer
	b, err := New(testConfig(t, bk.URL(), pl, "line1"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), printJobCmd("before"))
	w.waitStates(resultTopic("line1"), "before", StateQueued, StateSent)

	lift := limitFileSize(t)
	s.send(cmdTopic("line1", "printJob"), printJobCmd("during"))
	s.send(cmdTopic("line1", "trigger"), map[string]any{"id": "behind"})
	failure := `level=ERROR msg="the outbox failed (a read or a write, as err says); the command waits and is tried again" id=during printer=line1`
	eventually(t, "three failures logged", func() bool { return strings.Count(logs.String(), failure) >= 3 })
	if got := w.statesOf(resultTopic("line1"), "during"); len(got) != 0 {
		t.Errorf("during: %v while the outbox could not be written, want nothing yet", got)
	}
	if got := w.statesOf(resultTopic("line1"), "behind"); len(got) != 0 {
		t.Errorf("the command behind: %v, want it waiting its turn", got)
	}
	if !strings.Contains(logs.String(), "file too large") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
	lift()
	w.waitStates(resultTopic("line1"), "during", StateQueued, StateSent)
	w.waitStates(resultTopic("line1"), "behind", StateQueued, StateSent)
	time.Sleep(100 * time.Millisecond) // a second result of either would show by now
	w.waitStates(resultTopic("line1"), "during", StateQueued, StateSent)
	if n := pl.printed("during"); n != 1 {
		t.Errorf("during reached the printer %d times, want 1", n)
	}
	if got := pl.arrivals("line1"); !equal(got, []string{"before", "during"}) {
		t.Errorf("print jobs at the printer: %v", got)
	}
	if c, _ := pl.Sim.Counters("line1"); c.Triggers != 1 {
		t.Errorf("%d triggers reached the printer, want 1", c.Triggers)
	}
}

// limitFileSize sets the process's file-size limit (RLIMIT_FSIZE) to 8 KiB, with SIGXFSZ
// ignored, and returns the function that lifts it (also called at cleanup). bbolt writes its
// data pages from the third 4 KiB page of the file on, so every commit fails with EFBIG.
func limitFileSize(t *testing.T) func() {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	lifted := false
	lift := func() {
		if !lifted {
			lifted = true
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
				t.Fatalf("lifting the file-size limit: %v", err)
			}
			signal.Reset(syscall.SIGXFSZ)
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 8192, Max: old.Max}); err != nil {
		signal.Reset(syscall.SIGXFSZ)
		t.Skipf("cannot set a file-size limit: %v", err)
	}
	t.Cleanup(lift)
	return lift
}

// TestOutboxDeliveryRestartsAfterWriteFailure: a queued job whose printer was offline is due
// again while the outbox cannot be written: recording it as being sent fails, which stops the
// outbox's delivery; the bridge starts it again with back-off, logging each failure at error
// level, and once the limit is lifted the job is sent, once.
func TestOutboxDeliveryRestartsAfterWriteFailure(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	var logs lockedBuffer
	b, err := New(testConfig(t, bk.URL(), pl, "line1"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	pl.setDown(true)
	newSender(t, bk.URL()).send(cmdTopic("line1", "printJob"), printJobCmd("x"))
	w.waitStates(resultTopic("line1"), "x", StateQueued)
	eventually(t, "a failed attempt recorded", func() bool {
		e, err := b.ctls[0].ob.Get("line1/x")
		return err == nil && e.Attempts >= 1 && e.State == "pending"
	})
	lift := limitFileSize(t)
	pl.setDown(false)
	failure := `level=ERROR msg="the outbox failed (a read or a write, as err says); delivery to its printers starts again"`
	eventually(t, "two restarts logged", func() bool { return strings.Count(logs.String(), failure) >= 2 })
	if n := pl.printed("x"); n != 0 {
		t.Fatalf("x reached the printer %d times while its sending could not be recorded", n)
	}
	lift()
	w.waitStates(resultTopic("line1"), "x", StateQueued, StateSent)
	if n := pl.printed("x"); n != 1 {
		t.Errorf("x reached the printer %d times, want 1", n)
	}
}

// TestLedgerWriteFailureRetried: an abortPrint, and a cancel of an id not yet enqueued, are
// recorded in the ledger before they act; a ledger that cannot be written (the file-size limit again) holds
// each in place, retried with back-off and logged at error level each time, with the command
// behind it waiting its turn, instead of leaving it unacknowledged with nothing retrying it
// until the next connection. Once the limit is lifted each acts exactly once, in order.
func TestLedgerWriteFailureRetried(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	var logs lockedBuffer
	b, err := New(testConfig(t, bk.URL(), pl, "line1"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	abortPrints := func() int { return pl.Sim.Requests("POST", "/api/v3/printers/{name}/abortPrint") }
	for _, tc := range []struct {
		command, id string
		after       func()
	}{
		{cmdAbortPrint, "A", func() {
			w.waitStates(resultTopic("line1"), "A", StateDone)
			if n := abortPrints(); n != 1 {
				t.Errorf("%d abortPrints reached the printer, want 1", n)
			}
		}},
		// A cancel of an id not yet enqueued leaves a tombstone in the ledger.
		{cmdCancel, "nope", func() { w.waitStates(resultTopic("line1"), "nope", StateDone) }},
	} {
		behind := "behind-" + tc.command
		lift := limitFileSize(t)
		payload := map[string]any{"id": tc.id}
		msg := "the ledger failed (a read or a write, as err says); the command waits and is tried again"
		if tc.command == cmdCancel {
			payload["attempts"] = 0
			msg = "the outbox or the ledger cannot be read or written; the command waits and is tried again"
		}
		s.send(cmdTopic("line1", tc.command), payload)
		s.send(cmdTopic("line1", "printJob"), printJobCmd(behind))
		failure := `level=ERROR msg="` + msg + `" id=` + tc.id + ` printer=line1 command=` + tc.command
		eventually(t, tc.command+": three failures logged", func() bool { return strings.Count(logs.String(), failure) >= 3 })
		if got := w.statesOf(resultTopic("line1"), behind); len(got) != 0 {
			t.Errorf("the command behind %s: %v, want it waiting its turn", tc.command, got)
		}
		if n := abortPrints(); n != 0 && tc.command == cmdAbortPrint {
			t.Errorf("%d abortPrints reached the printer before they were recorded", n)
		}
		lift()
		w.waitStates(resultTopic("line1"), behind, StateQueued, StateSent)
		time.Sleep(100 * time.Millisecond) // a second result would show by now
		tc.after()
	}
	if !strings.Contains(logs.String(), "file too large") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
}
