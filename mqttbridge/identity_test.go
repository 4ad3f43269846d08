package mqttbridge

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestCancelResendNeedAttempts: a cancel or resend without "attempts" is answered invalid, the
// error naming the member and how to send it, and does nothing.
func TestCancelResendNeedAttempts(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		rt := resultTopic("line1")
		s.send(cmdTopic("line1", cmdPrintJob), map[string]any{"id": "X", "job": job("X"), "expireAfter": "1h"})
		w.waitStates(rt, "X", StateQueued, StateSent)
		for _, kind := range []string{cmdCancel, cmdResend} {
			s.send(cmdTopic("line1", kind), map[string]any{"id": "X"})
			s.send(cmdTopic("line1", kind), map[string]any{"id": "never-sent"})
		}
		eventually(t, "four answers", func() bool {
			n := 0
			for _, r := range w.results(rt) {
				if r.Command == cmdCancel || r.Command == cmdResend {
					n++
				}
			}
			return n >= 4
		})
		for _, r := range w.results(rt) {
			if r.Command != cmdCancel && r.Command != cmdResend {
				continue
			}
			want := `"attempts" is required: send {"id":"` + r.ID + `","attempts":N}`
			if r.State != StateInvalid || !strings.Contains(r.Error, want) {
				t.Errorf("%s %s without attempts: %+v, want invalid naming %s", r.Command, r.ID, r, want)
			}
		}
		// Nothing was left behind: the job never sent comes and is sent.
		s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("never-sent"))
		w.waitStates(rt, "never-sent", StateInvalid, StateInvalid, StateQueued, StateSent)
		if n := pl.printed("X"); n != 1 {
			t.Errorf("X reached the printer %d times, want 1", n)
		}
	})
}

// TestResendRepeatedActsOnce: a resend published once reaches the bridge twice as two
// messages with their own packet identifiers (a publisher whose PUBACK was lost sends it again
// on its next connection: two publishes of one payload, here from two clients). It acts once,
// and the repetition is answered duplicate with current done, not failed: it names the
// attempts the entry has left behind.
func TestResendRepeatedActsOnce(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		rt := resultTopic("line1")
		pl.mu.Lock()
		pl.hangUp["X"] = true // every printJob X is taken and hung up on: unknown each time
		pl.mu.Unlock()
		s := newSender(t, bk.URL())
		s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("X"))
		w.waitStates(rt, "X", StateQueued, StateUnknown)

		resend := map[string]any{"id": "X", "attempts": 1}
		s.send(cmdTopic("line1", cmdResend), resend)
		// The copy comes once X is unknown again, with 2 attempts: it must not send X again.
		eventually(t, "X unknown again", func() bool { return len(w.statesOf(rt, "X")) >= 4 })
		newSender(t, bk.URL()).send(cmdTopic("line1", cmdResend), resend)
		eventually(t, "both resends answered", func() bool { return len(w.statesOf(rt, "X")) >= 5 })
		// And a copy while X waits to be sent again: a second resend, then its copy at once.
		pl.mu.Lock()
		delete(pl.hangUp, "X")
		pl.mu.Unlock()
		again := map[string]any{"id": "X", "attempts": 2}
		s.send(cmdTopic("line1", cmdResend), again)
		s.send(cmdTopic("line1", cmdResend), again)
		s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("after"))
		w.waitStates(rt, "after", StateQueued, StateSent)
		eventually(t, "X sent", func() bool { return contains(w.statesOf(rt, "X"), StateSent) })

		var resends []string
		for _, r := range w.results(rt) {
			if r.ID == "X" && r.Command == cmdResend {
				s := r.State
				if r.Current != "" {
					s += "(" + r.Current + ")"
				}
				resends = append(resends, s)
			}
		}
		want := []string{StateDone, StateDuplicate + "(" + StateDone + ")", StateDone, StateDuplicate + "(" + StateDone + ")"}
		if !equal(resends, want) {
			t.Errorf("resend answers %v, want %v", resends, want)
		}
		if n := pl.printed("X"); n != 3 {
			t.Errorf("X reached the printer %d times, want 3 (once, and once per resend)", n)
		}
	})
}

// TestPacketIDReusedForANewResend: the broker gives the packet identifiers of earlier resends
// to new ones (after its restart, or every 65,535 messages), with the DUP flag of a resumed
// session, and with payloads byte for byte the earlier ones': here, resends of an id enqueued
// again after its first entry was pruned and the id forgotten. The bridge keeps no record by
// packet identifier: each new resend finds its entry unknown with the attempts it names, and
// runs.
func TestPacketIDReusedForANewResend(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	b, err := New(testConfig(t, bk.URL(), pl, "line1"))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	rt := resultTopic("line1")
	hangUp := func(on bool) {
		pl.mu.Lock()
		pl.hangUp["X"] = on
		pl.mu.Unlock()
	}
	deliver := func(pid uint16, dup bool, payload string) {
		t.Helper()
		pb := paho.PublishFromPacketPublish(&packets.Publish{Properties: &packets.Properties{}, PacketID: pid, QoS: 1,
			Duplicate: dup, Topic: cmdTopic("line1", cmdResend), Payload: []byte(payload)})
		done := b.handle(context.Background(), pb, reply{}) // one command at a time: this test's own

		if done == nil {
			t.Fatal("the command was left with the broker")
		}
		<-done
	}
	answers := func(command string) []string {
		var out []string
		for _, r := range w.results(rt) {
			if r.ID == "X" && r.Command == command {
				out = append(out, r.State)
			}
		}
		return out
	}
	jobStates := func(want ...string) {
		t.Helper()
		eventually(t, fmt.Sprintf("X %v", want), func() bool { return len(answers(cmdPrintJob)) >= len(want) })
		if got := answers(cmdPrintJob); !equal(got, want) {
			t.Fatalf("printJob X answers %v, want %v", got, want)
		}
	}
	// X unknown; resent under identifier 7 (unknown again), then under 8 (sent).
	round := func(dup bool, before ...string) {
		t.Helper()
		hangUp(true)
		s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("X"))
		jobStates(append(before, StateQueued, StateUnknown)...)
		deliver(7, dup, `{"id":"X","attempts":1}`)
		jobStates(append(before, StateQueued, StateUnknown, StateUnknown)...)
		hangUp(false)
		deliver(8, dup, `{"id":"X","attempts":2}`)
		jobStates(append(before, StateQueued, StateUnknown, StateUnknown, StateSent)...)
	}
	round(false)

	// X pruned and its id forgotten; X comes again, and so do the resends' messages, byte for
	// byte, under their identifiers, with DUP set.
	ob := b.ctls[0].ob
	if _, err := ob.Prune(0); err != nil {
		t.Fatal(err)
	}
	if _, err := ob.ForgetIDs(0); err != nil {
		t.Fatal(err)
	}
	round(true, StateQueued, StateUnknown, StateUnknown, StateSent)
	if got := answers(cmdResend); !equal(got, []string{StateDone, StateDone, StateDone, StateDone}) {
		t.Errorf("resend answers %v, want done four times", got)
	}
	if n := pl.printed("X"); n != 6 {
		t.Errorf("X reached the printer %d times, want 6 (twice three times)", n)
	}
}

// TestCancelBeforeItsJob: a cancel naming 0 attempts of an id not yet enqueued leaves a
// tombstone for that printer and id: the printJob, deselect or trigger that comes later with
// the id is answered cancelled and never sent, also after the bridge restarted; the cancel
// again is answered duplicate. With a state directory and with a pair's PostgreSQL.
func TestCancelBeforeItsJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		t.Run("state_dir", func(t *testing.T) {
			testCancelBeforeItsJob(t, newRig(t, bk, fmt.Sprintf("tomb-%s", strings.ReplaceAll(t.Name(), "/", "-"))))
		})
		t.Run("postgres", func(t *testing.T) {
			dsn := pgtest.DSN(t)
			name := "tomb-pg-" + strings.ReplaceAll(t.Name(), "/", "-")
			r := newRig(t, bk, name)
			cfg := fmt.Sprintf("broker: {url: %q, client_id: %q}\ntopic_prefix: %q\noutbox: {postgres: {dsn: %q}, lease_ttl: 4s}\npoll_interval: 200ms\nprinters:\n  - {name: %s, url: %q, printer: %s}\n",
				bk.URL(), name, r.prefix, dsn, r.printer, r.pl.URL, r.printer)
			r.cfg = writeFile(t, r.dir, "bridge.yml", cfg)
			testCancelBeforeItsJob(t, r)
		})
	})
}

func testCancelBeforeItsJob(t *testing.T, r *rig) {
	r.start("")
	for _, id := range []string{"Y", "D", "T", "Z"} {
		r.send(cmdCancel, map[string]any{"id": id, "attempts": 0})
	}
	r.send(cmdCancel, map[string]any{"id": "Y", "attempts": 0}) // the same cancel again
	r.send(cmdPrintJob, printJobCmd("Y"))
	r.send(cmdPrintJob, map[string]any{"id": "D"}) // deselect
	r.send(cmdTrigger, map[string]any{"id": "T"})
	eventually(t, "the three answered", func() bool {
		return r.has(cmdPrintJob, "Y", StateCancelled) && r.has(cmdPrintJob, "D", StateCancelled) && r.has(cmdTrigger, "T", StateCancelled)
	})
	if got := r.states(cmdCancel, "Y"); !equal(got, []string{StateDone, StateDuplicate + "(" + StateDone + ")"}) {
		t.Errorf("cancel Y answers %v, want done, then duplicate(done)", got)
	}
	// After a restart the tombstone is still there; the job again, and Z's first time.
	r.stop()
	r.start("")
	r.send(cmdPrintJob, printJobCmd("Y"))
	r.send(cmdPrintJob, printJobCmd("Z"))
	r.marker("after")
	r.stop()
	if got := r.states(cmdPrintJob, "Y"); !equal(got, []string{StateCancelled, StateCancelled}) {
		t.Errorf("printJob Y answers %v, want cancelled twice", got)
	}
	if got := r.states(cmdPrintJob, "Z"); !equal(got, []string{StateCancelled}) {
		t.Errorf("printJob Z answers %v, want cancelled", got)
	}
	if n := r.requests("printJob"); n != 1 {
		t.Errorf("the printer received %d printJob requests, want 1 (the marker)", n)
	}
	if n := r.requests("trigger"); n != 0 {
		t.Errorf("the printer received %d triggers, want 0", n)
	}
}

// TestFinalResultPublishedAgain: the bridge is killed (SIGKILL) after the outbox committed a
// job's final state (sent; with a state directory also unknown: the printer hung up) and
// before its result reached the broker. The next bridge publishes that result at start, once;
// a later start publishes it no more, since the broker's taking it was marked. With a state
// directory and with a pair's PostgreSQL, on both brokers.
func TestFinalResultPublishedAgain(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		for _, state := range []string{StateSent, StateUnknown} {
			t.Run("state_dir/"+state, func(t *testing.T) {
				testFinalResultPublishedAgain(t, newRig(t, bk, "final-"+strings.ReplaceAll(t.Name(), "/", "-")), state)
			})
		}
		t.Run("postgres", func(t *testing.T) {
			dsn := pgtest.DSN(t)
			name := "final-pg-" + strings.ReplaceAll(t.Name(), "/", "-")
			r := newRig(t, bk, name)
			cfg := fmt.Sprintf("broker: {url: %q, client_id: %q}\ntopic_prefix: %q\noutbox: {postgres: {dsn: %q}, lease_ttl: 2s}\npoll_interval: 200ms\nprinters:\n  - {name: %s, url: %q, printer: %s}\n",
				bk.URL(), name, r.prefix, dsn, r.printer, r.pl.URL, r.printer)
			r.cfg = writeFile(t, r.dir, "bridge.yml", cfg)
			testFinalResultPublishedAgain(t, r, StateSent)
		})
	})
}

func testFinalResultPublishedAgain(t *testing.T, r *rig, state string) {
	r.start(cmdPrintJob + ":" + crashAfterFinal)
	if state == StateUnknown {
		r.pl.mu.Lock()
		r.pl.hangUp["X"] = true
		r.pl.mu.Unlock()
	}
	r.send(cmdPrintJob, printJobCmd("X"))
	r.crash(func() bool { return r.pl.printed("X") == 1 })
	if r.has(cmdPrintJob, "X", state) {
		t.Fatalf("before the restart X answered %v: sent came out before the kill", r.states(cmdPrintJob, "X"))
	}
	r.start("")
	eventually(t, "X's result published again", func() bool { return r.has(cmdPrintJob, "X", state) })
	r.marker("after")
	r.stop()
	r.start("")
	r.marker("after-2")
	r.stop()
	// The printJob itself may come again (killed before its queued result or its PUBACK went
	// out): then queued is missing, or duplicate follows.
	n := 0
	for _, s := range r.states(cmdPrintJob, "X") {
		switch {
		case s == state:
			n++
		case s != StateQueued && !strings.HasPrefix(s, StateDuplicate):
			t.Errorf("X answered %s", s)
		}
	}
	if n != 1 {
		t.Errorf("X answered %v, want %s once", r.states(cmdPrintJob, "X"), state)
	}
	if n := r.pl.printed("X"); n != 1 {
		t.Errorf("X reached the printer %d times, want 1", n)
	}
}
