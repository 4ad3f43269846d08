package mqttbridge

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// The child process of these tests dies by SIGKILL at one crash point (crashAtEnv,
// "kind:point"): it writes the file crashWaitEnv names plus ".reached", waits for the file
// itself (the parent creates it once the printer shows what the kill should find), and kills
// itself, as a power cut would.
const (
	crashAtEnv   = "MQTTBRIDGE_CRASH_AT"
	crashWaitEnv = "MQTTBRIDGE_CRASH_WAIT"
)

// childCrashOptions returns the option that makes this child die at its crash point.
func childCrashOptions() []Option {
	at, wait := os.Getenv(crashAtEnv), os.Getenv(crashWaitEnv)
	if at == "" {
		return nil
	}
	return []Option{withCrash(func(kind, point string) {
		if kind+":"+point != at {
			return
		}
		if wait != "" {
			_ = os.WriteFile(wait+".reached", nil, 0o600)
			deadline := time.Now().Add(waitLimit)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(wait); err == nil {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal ends the process; nothing more of it runs
	})}
}

// rig is one printer on a plant, a bridge process for it (restarted, killed at crash points)
// and a caller on the broker, under a topic prefix of its own.
type rig struct {
	t       *testing.T
	bk      testBroker
	pl      *plant
	printer string
	prefix  string
	dir     string
	cfg     string
	w       *watcher
	s       *sender
	child   *exec.Cmd
	starts  int
	wait    string // the crash's go file, while a child is meant to die
}

func newRig(t *testing.T, bk testBroker, name string) *rig {
	t.Helper()
	r := &rig{t: t, bk: bk, printer: "line1", prefix: "once/" + name, dir: t.TempDir()}
	r.pl = startPlant(t, r.printer)
	cfg := fmt.Sprintf("broker: {url: %q, client_id: %q}\ntopic_prefix: %q\nstate_dir: %q\npoll_interval: 200ms\nprinters:\n  - {name: %s, url: %q, printer: %s}\n",
		bk.URL(), "once-"+name, r.prefix, filepath.Join(r.dir, "state"), r.printer, r.pl.URL, r.printer)
	r.cfg = writeFile(t, r.dir, "bridge.yml", cfg)
	r.w = watch(t, bk.URL(), r.prefix+"/#")
	r.s = newSender(t, bk.URL())
	return r
}

func (r *rig) cmdTopic(kind string) string { return r.prefix + "/" + r.printer + "/cmd/" + kind }
func (r *rig) resultTopic() string         { return r.prefix + "/" + r.printer + "/result" }

func (r *rig) onlines() int {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	n := 0
	for _, p := range r.w.got {
		if p.Topic == onlineTopic(r.prefix) && onlineStateOf(p) == BridgeOnline {
			n++
		}
	}
	return n
}

// start runs a bridge process, to die at crashAt ("kind:point") when that is set, and
// waits until it is online.
func (r *rig) start(crashAt string) {
	r.t.Helper()
	r.starts++
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+r.cfg)
	r.wait = ""
	if crashAt != "" {
		r.wait = filepath.Join(r.dir, fmt.Sprintf("go-%d", r.starts))
		cmd.Env = append(cmd.Env, crashAtEnv+"="+crashAt, crashWaitEnv+"="+r.wait)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r.child = cmd
	n := r.starts
	eventually(r.t, fmt.Sprintf("bridge %d online", n), func() bool { return r.onlines() >= n })
}

// crash waits until the child reached its crash point, then until ready holds, and lets it
// die there.
func (r *rig) crash(ready func() bool) {
	r.t.Helper()
	eventually(r.t, "the crash point", func() bool {
		_, err := os.Stat(r.wait + ".reached")
		return err == nil
	})
	if ready != nil {
		eventually(r.t, "the state the kill should find", ready)
	}
	if err := os.WriteFile(r.wait, nil, 0o600); err != nil {
		r.t.Fatal(err)
	}
	err := r.child.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		r.t.Fatalf("the bridge was to die by SIGKILL at its crash point: %v", err)
	}
}

// stop ends the current child with SIGTERM.
func (r *rig) stop() {
	r.t.Helper()
	_ = r.child.Process.Signal(syscall.SIGTERM)
	if err := r.child.Wait(); err != nil {
		r.t.Fatalf("the bridge did not stop cleanly: %v", err)
	}
}

func (r *rig) send(kind string, payload any) { r.s.send(r.cmdTopic(kind), payload) }

// answers returns the results of command kind for id, in arrival order.
func (r *rig) answers(command, id string) []Result {
	var out []Result
	for _, res := range r.w.results(r.resultTopic()) {
		if res.ID == id && res.Command == command {
			out = append(out, res)
		}
	}
	return out
}

func (r *rig) states(command, id string) []string {
	var out []string
	for _, res := range r.answers(command, id) {
		s := res.State
		if res.Current != "" {
			s += "(" + res.Current + ")"
		}
		out = append(out, s)
	}
	return out
}

func (r *rig) has(command, id string, states ...string) bool {
	got := r.states(command, id)
	for _, s := range states {
		if contains(got, s) {
			return true
		}
	}
	return false
}

// requests counts the requests of one kind the printer received.
func (r *rig) requests(path string) int {
	return r.pl.Sim.Requests("POST", "/api/v3/printers/{name}/"+path)
}

// marker sends a print job and waits until it is sent: the printer's commands are handled
// in order, so every command before it has been answered.
func (r *rig) marker(id string) {
	r.t.Helper()
	r.send(cmdPrintJob, printJobCmd(id))
	eventually(r.t, "marker "+id+" sent", func() bool { return r.has(cmdPrintJob, id, StateSent) })
}

// makeUnknown sends print job id and has the printer take it and hang up: unknown.
func (r *rig) makeUnknown(id string) {
	r.t.Helper()
	r.pl.mu.Lock()
	r.pl.hangUp[id] = true
	r.pl.mu.Unlock()
	r.send(cmdPrintJob, printJobCmd(id))
	eventually(r.t, id+" unknown", func() bool { return r.has(cmdPrintJob, id, StateUnknown) })
	r.pl.mu.Lock()
	delete(r.pl.hangUp, id)
	r.pl.mu.Unlock()
}

// holdJob makes the printer hold the next printJob id until release.
func (r *rig) holdJob(id string) (release func()) {
	c := make(chan struct{})
	r.pl.mu.Lock()
	r.pl.hold[id] = c
	r.pl.mu.Unlock()
	return func() {
		r.pl.mu.Lock()
		defer r.pl.mu.Unlock()
		if r.pl.hold[id] == c {
			delete(r.pl.hold, id)
			close(c)
		}
	}
}

// TestRedeliveredResendNotRunAgain is the reproduction of the issue: printJob X's answer is
// lost (unknown); an operator sends one resend; the bridge dies after the resend's result and
// before its PUBACK, while X is on its way again; the broker redelivers the resend. X must
// not print a third time, and the redelivery is answered duplicate with current done.
func TestRedeliveredResendNotRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		r := newRig(t, bk, "resend-repro")
		r.start(cmdResend + ":" + crashAfterResult)
		r.makeUnknown("X")
		release := r.holdJob("X")
		r.send(cmdResend, map[string]any{"id": "X", "attempts": 1})
		r.crash(func() bool { return r.pl.printed("X") == 2 })
		release()
		r.start("")
		eventually(t, "the redelivered resend answered", func() bool { return len(r.answers(cmdResend, "X")) >= 2 })
		r.marker("after")
		r.stop()
		if n := r.pl.printed("X"); n != 2 {
			t.Errorf("X reached the printer %d times, want 2 (once, and once for the one resend)", n)
		}
		got := r.states(cmdResend, "X")
		if !equal(got, []string{StateDone, StateDuplicate + "(" + StateDone + ")"}) {
			t.Errorf("resend answers %v, want done, then duplicate(done)", got)
		}
	})
}

// TestRedeliveredAbortAfterLaterJob is the reproduction of the issue: an abortPrint is done,
// a later printJob is sent, and the bridge dies before either is acknowledged; the broker
// redelivers both. The abortPrint must not run again and wipe the later job.
func TestRedeliveredAbortAfterLaterJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		r := newRig(t, bk, "abort-repro")
		r.start(cmdAbortPrint + ":" + crashAfterResult)
		r.send(cmdAbortPrint, map[string]any{"id": "A"})
		r.send(cmdPrintJob, printJobCmd("X"))
		r.crash(func() bool { return r.has(cmdPrintJob, "X", StateSent) })
		r.start("")
		eventually(t, "the redelivered abortPrint answered", func() bool { return len(r.answers(cmdAbortPrint, "A")) >= 2 })
		// A trigger prints the job selected: X, unless the abortPrint wiped it.
		r.send(cmdTrigger, map[string]any{"id": "after"})
		eventually(t, "the trigger settled", func() bool { return r.has(cmdTrigger, "after", StateSent, StateRejected) })
		r.stop()
		if n := r.requests("abortPrint"); n != 1 {
			t.Errorf("the printer received %d abortPrints, want 1", n)
		}
		if !r.has(cmdTrigger, "after", StateSent) {
			t.Errorf("the trigger after the redelivery: %v; X was wiped", r.states(cmdTrigger, "after"))
		}
		if got := r.states(cmdAbortPrint, "A"); !equal(got, []string{StateDone, StateDuplicate + "(" + StateDone + ")"}) {
			t.Errorf("abortPrint answers %v, want done, then duplicate(done)", got)
		}
	})
}

// TestResendAttempts: results carry the entry's attempts; a resend names the attempts it saw
// and acts only while the entry still has them (as If-Match); the same resend again is
// answered duplicate, and a person's second, deliberate resend naming the new attempts is
// executed. A resend naming no attempts, or bad ones, is invalid.
func TestResendAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	bk := newEmbedded(t)
	r := newRig(t, bk, "attempts")
	r.start("")
	r.pl.mu.Lock()
	r.pl.hangUp["X"] = true // every printJob X is taken and hung up on: unknown each time
	r.pl.mu.Unlock()
	r.send(cmdPrintJob, printJobCmd("X"))
	eventually(t, "X unknown", func() bool { return r.has(cmdPrintJob, "X", StateUnknown) })
	if a := r.answers(cmdPrintJob, "X"); a[len(a)-1].Attempts != 1 {
		t.Errorf("the unknown result carries attempts %d, want 1", a[len(a)-1].Attempts)
	}
	last := func(command, id string, n int) Result {
		t.Helper()
		eventually(t, fmt.Sprintf("%d answers to %s %s", n, command, id), func() bool { return len(r.answers(command, id)) >= n })
		a := r.answers(command, id)
		return a[n-1]
	}

	// Named attempts that the entry no longer has: nothing done.
	r.send(cmdResend, map[string]any{"id": "X", "attempts": 0})
	if res := last(cmdResend, "X", 1); res.State != StateFailed || res.Attempts != 1 || !strings.Contains(res.Error, "not 0") {
		t.Errorf("resend naming 0 attempts of an entry with 1: %+v", res)
	}
	// The attempts it has: resent, and unknown again with 2.
	r.send(cmdResend, map[string]any{"id": "X", "attempts": 1})
	if res := last(cmdResend, "X", 2); res.State != StateDone || res.Attempts != 1 {
		t.Errorf("resend naming 1 attempt: %+v", res)
	}
	eventually(t, "X unknown again", func() bool { return len(r.answers(cmdPrintJob, "X")) >= 3 })
	// The same payload again, a new message: the same resend, which was done.
	r.send(cmdResend, map[string]any{"id": "X", "attempts": 1})
	if res := last(cmdResend, "X", 3); res.State != StateDuplicate || res.Current != StateDone || res.Attempts != 2 {
		t.Errorf("the same resend again: %+v", res)
	}
	// A person's second, deliberate resend, naming the attempts of the second unknown: executed.
	r.pl.mu.Lock()
	delete(r.pl.hangUp, "X")
	r.pl.mu.Unlock()
	r.send(cmdResend, map[string]any{"id": "X", "attempts": 2})
	if res := last(cmdResend, "X", 4); res.State != StateDone {
		t.Errorf("a second resend: %+v", res)
	}
	eventually(t, "X sent", func() bool { return r.has(cmdPrintJob, "X", StateSent) })
	for _, bad := range []string{`{"id":"X","attempts":-1}`, `{"id":"X","attempts":1.5}`, `{"id":"X","attempts":"1"}`, `{"id":"X","attempts":1e0}`, `{"id":"X"}`} {
		r.s.send(r.cmdTopic(cmdResend), bad)
	}
	eventually(t, "the bad attempts answered", func() bool { return len(r.answers(cmdResend, "X")) >= 9 })
	for _, res := range r.answers(cmdResend, "X")[4:] {
		if res.State != StateInvalid {
			t.Errorf("bad attempts: %+v, want invalid", res)
		}
	}
	r.stop()
	if n := r.pl.printed("X"); n != 3 {
		t.Errorf("X reached the printer %d times, want 3 (once, and once per resend done)", n)
	}
}

// matrixKind is one command kind of the redelivery matrix.
type matrixKind struct {
	kind string
	// setup runs before the command is sent; send sends it; ready is what the kill waits
	// for at each point (nil: nothing); effects counts what reached the printer for it, and
	// want is that count when the command took effect once.
	setup   func(r *rig)
	send    func(r *rig)
	ready   func(r *rig, point string) bool
	effects func(r *rig) int
	want    int
	// command and id name its answers.
	command, id string
}

var matrixKinds = []matrixKind{
	{
		kind: cmdPrintJob, command: cmdPrintJob, id: "T", want: 1,
		send:    func(r *rig) { r.send(cmdPrintJob, printJobCmd("T")) },
		ready:   func(r *rig, point string) bool { return point == crashBeforeCommit || r.pl.printed("T") == 1 },
		effects: func(r *rig) int { return r.pl.printed("T") },
	},
	{
		kind: "deselect", command: cmdPrintJob, id: "T", want: 1,
		send:    func(r *rig) { r.send(cmdPrintJob, map[string]any{"id": "T"}) },
		ready:   func(r *rig, point string) bool { return point == crashBeforeCommit || r.pl.printed("<deselect>") == 1 },
		effects: func(r *rig) int { return r.pl.printed("<deselect>") },
	},
	{
		kind: cmdTrigger, command: cmdTrigger, id: "T", want: 1,
		setup: func(r *rig) {
			r.send(cmdPrintJob, printJobCmd("sel"))
			eventually(r.t, "sel sent", func() bool { return r.has(cmdPrintJob, "sel", StateSent) })
		},
		send:    func(r *rig) { r.send(cmdTrigger, map[string]any{"id": "T"}) },
		ready:   func(r *rig, point string) bool { return point == crashBeforeCommit || r.requests("trigger") == 1 },
		effects: func(r *rig) int { return r.requests("trigger") },
	},
	{
		kind: cmdAbortPrint, command: cmdAbortPrint, id: "T", want: 1,
		send:    func(r *rig) { r.send(cmdAbortPrint, map[string]any{"id": "T"}) },
		effects: func(r *rig) int { return r.requests("abortPrint") },
	},
	{
		// Cancel of an unknown entry: nothing reaches the printer; the entry is cancelled once.
		kind: cmdCancel, command: cmdCancel, id: "X", want: 1,
		setup:   func(r *rig) { r.makeUnknown("X") },
		send:    func(r *rig) { r.send(cmdCancel, map[string]any{"id": "X", "attempts": 1}) },
		effects: func(r *rig) int { return r.pl.printed("X") },
	},
	{
		// Resend of an unknown entry, held at the printer so the kill finds it on its way.
		kind: cmdResend, command: cmdResend, id: "X", want: 2,
		setup: func(r *rig) { r.makeUnknown("X") },
		send:  func(r *rig) { r.send(cmdResend, map[string]any{"id": "X", "attempts": 1}) },
		ready: func(r *rig, point string) bool {
			return point == crashBeforeCommit || r.pl.printed("X") == 2
		},
		effects: func(r *rig) int { return r.pl.printed("X") },
	},
}

// raceSubset says whether the case of kind i at point j (of n) of a matrix runs: always in a
// plain run, which runs every case; under the race detector, which needs each code path once
// rather than every case, each kind at one point per broker, the point moving on with the
// kind and differing between the brokers, so that every kind and every point is still run
// (a third of the bridge's matrix, a quarter of the Sparkplug one).
func raceSubset(bk testBroker, i, j, n int) bool {
	if !raceDetector {
		return true
	}
	shift := 0
	if _, embedded := bk.(*embeddedBroker); !embedded {
		shift = n / 2
	}
	return (i+shift)%n == j
}

// TestRedeliveryMatrix: for each command kind, the bridge process is killed (SIGKILL) at each
// point of its handling — before the commit, after the commit before the result, after the
// result before the PUBACK — and the broker redelivers the command to the next process. The
// printer's journal shows the command's effect once, the redelivery is answered, the command
// is executed (queued or done) at most once, and every answer agrees with the journal.
func TestRedeliveryMatrix(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		points := []string{crashBeforeCommit, crashAfterCommit, crashAfterResult}
		for i, mk := range matrixKinds {
			for j, point := range points {
				if !raceSubset(bk, i, j, len(points)) {
					continue
				}
				t.Run(mk.kind+"/"+point, func(t *testing.T) {
					testRedelivery(t, bk, mk, point)
				})
			}
		}
	})
}

func testRedelivery(t *testing.T, bk testBroker, mk matrixKind, point string) {
	r := newRig(t, bk, fmt.Sprintf("matrix-%s-%s-%d", mk.kind, point, time.Now().UnixNano()))
	r.start(mk.kind + ":" + point)
	if mk.setup != nil {
		mk.setup(r)
	}
	release := func() {}
	if mk.kind == cmdResend {
		release = r.holdJob("X")
	}
	mk.send(r)
	r.crash(func() bool { return mk.ready == nil || mk.ready(r, point) })
	release()
	before := len(r.answers(mk.command, mk.id))
	r.start("")
	eventually(t, "the redelivery answered", func() bool { return len(r.answers(mk.command, mk.id)) > before })
	r.marker("marker")
	r.stop()

	got := r.states(mk.command, mk.id)
	n := mk.effects(r)
	t.Logf("answers %v (%d before the kill); effects at the printer: %d", got, before, n)
	executed := 0
	for _, s := range got {
		switch {
		case s == StateQueued, s == StateDone:
			executed++
		case s == StateFailed, s == StateInvalid, s == StateRejected, strings.HasPrefix(s, StateDuplicate+"("+StateFailed):
			t.Errorf("answer %s: the command was to succeed", s)
		}
	}
	if executed > 1 {
		t.Errorf("executed %d times (answers %v)", executed, got)
	}
	says := func(states ...string) bool {
		for _, s := range got {
			for _, w := range states {
				if s == w || s == StateDuplicate+"("+w+")" {
					return true
				}
			}
		}
		return false
	}
	switch {
	case n > mk.want:
		t.Errorf("the printer's journal shows %d effects, at most %d allowed", n, mk.want)
	case says(StateUnknown) && !says(StateSent, StateDone):
		// The process died while the request was out: at most once, and a person decides.
	case n != mk.want:
		t.Errorf("the answers say it took effect (%v), the printer's journal shows %d effects, want %d", got, n, mk.want)
	}
}

// TestAbortPrintOrder: while a printer's abortPrint is out, another printer's commands go on,
// and the same printer's later command reaches it only once the abortPrint is answered.
func TestAbortPrintOrder(t *testing.T) {
	pl := startPlant(t, "line1", "line2")
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	// A second server on the same simulator holds every abortPrint until released.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := printersim.Serve(ln, pl.Sim, func(next http.Handler) http.Handler {
		return pl.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/abortPrint") {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			next.ServeHTTP(w, r)
		}))
	})
	t.Cleanup(srv.Close)
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	cfg := testConfig(t, bk.URL(), pl, "line1", "line2")
	for i := range cfg.Printers {
		cfg.Printers[i].URL = srv.URL
	}
	startBridge(t, cfg)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", cmdAbortPrint), map[string]any{"id": "A"})
	s.send(cmdTopic("line2", cmdPrintJob), printJobCmd("J2"))
	s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("J1"))
	w.waitStates(resultTopic("line2"), "J2", StateQueued, StateSent)
	time.Sleep(100 * time.Millisecond) // room for J1 to overtake, were it let
	if got := w.statesOf(resultTopic("line1"), "A"); len(got) != 0 {
		t.Fatalf("the held abortPrint answered %v", got)
	}
	if n := pl.printed("J1"); n != 0 {
		t.Errorf("J1 reached the printer while the abortPrint before it was out")
	}
	once.Do(func() { close(release) })
	w.waitStates(resultTopic("line1"), "A", StateDone)
	w.waitStates(resultTopic("line1"), "J1", StateQueued, StateSent)
	if n := pl.Sim.QueueLength("line1"); n != 1 {
		t.Errorf("line1 has %d jobs selected after the abortPrint and J1, want 1 (J1)", n)
	}
}
