package mqttbridge

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The randomized sequence test, in the spirit of printersim's FuzzRequestSequences: a program
// is a byte string, each pair of bytes one step (an operation and its argument), run against a
// bridge process that dies at random crash points and is restarted, with printer faults. The
// invariant is checked after every step: for each printer and id, at most one effect per
// message; at the end, every message answered. A failing program is printed as a Go string,
// to be replayed with MQTTBRIDGE_SEQ_PROGRAM.

const (
	seqPrintJob = iota
	seqDeselect
	seqTrigger
	seqAbort
	seqCancel
	seqResend
	seqAgain   // the same own-id command again, as a new message (a caller's retry)
	seqArm     // restart the bridge, armed to die at a crash point of its own
	seqKill    // SIGKILL the bridge now, and restart it
	seqOffline // the printer's port closed for the next step
	seqOps
)

var seqKinds = []string{cmdPrintJob, "deselect", cmdTrigger, cmdAbortPrint, cmdCancel, cmdResend}
var seqPoints = []string{crashBeforeCommit, crashAfterCommit, crashAfterResult}

// seqMsg is one message the program published.
type seqMsg struct {
	printer, command, id string
	kind                 string // seqKinds
	payload              map[string]any
}

type seqRun struct {
	t        *testing.T
	bridge   *rig // the bridge of both printers, its plant and its caller
	printers []string
	wait     bool // wait for each message's answer before the next (the embedded broker)
	msgs     []seqMsg
	jobs     map[string][]string // printer -> printJob ids
	next     int
	died     chan struct{}
	down     bool
}

func TestCommandSequences(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	programs := [][]byte{}
	if p := os.Getenv("MQTTBRIDGE_SEQ_PROGRAM"); p != "" {
		s, err := strconv.Unquote(p)
		if err != nil {
			t.Fatalf("MQTTBRIDGE_SEQ_PROGRAM is not a quoted Go string: %v", err)
		}
		programs = append(programs, []byte(s))
	} else {
		// Programs shaped like the reproductions (a resend of an unknown job, the
		// bridge dying after its result; an abortPrint, the bridge dying after its result,
		// then later commands); the kill falls wherever the process is, so they need not
		// hit the window the dedicated tests hold open.
		programs = append(programs,
			[]byte{seqPrintJob, 4, seqArm, 5*3 + 2, seqResend, 8, seqPrintJob, 0},
			[]byte{seqArm, 3*3 + 2, seqAbort, 0, seqPrintJob, 0, seqTrigger, 0},
		)
		seed := uint64(time.Now().UnixNano())
		if s := os.Getenv("MQTTBRIDGE_SEQ_SEED"); s != "" {
			seed, _ = strconv.ParseUint(s, 10, 64)
		}
		t.Logf("seed %d (MQTTBRIDGE_SEQ_SEED replays it)", seed)
		rng := rand.New(rand.NewPCG(seed, seed>>1))
		// Three random programs in a plain run, which gives the randomness its breadth; one
		// under the race detector, which needs each code path once rather than many programs.
		random := 3
		if raceDetector {
			random = 1
		}
		for range random {
			p := make([]byte, 2*30)
			for i := range p {
				p[i] = byte(rng.UintN(256))
			}
			programs = append(programs, p)
		}
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		_, embedded := bk.(*embeddedBroker)
		for i, p := range programs {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				defer func() {
					if t.Failed() {
						t.Logf("program: MQTTBRIDGE_SEQ_PROGRAM=%s", strconv.Quote(strconv.Quote(string(p))))
					}
				}()
				runSequence(t, bk, p, embedded)
			})
		}
	})
}

func runSequence(t *testing.T, bk testBroker, program []byte, wait bool) {
	name := fmt.Sprintf("seq-%d", time.Now().UnixNano())
	r := newRig(t, bk, name)
	s := &seqRun{t: t, bridge: r, printers: []string{"line1", "line2"}, wait: wait, jobs: map[string][]string{}}
	s.restartPlant()
	s.start("")
	for i := 0; i+1 < len(program); i += 2 {
		op, arg := int(program[i])%seqOps, int(program[i+1])
		s.step(op, arg)
		if s.down && op != seqOffline {
			s.bridge.pl.setDown(false)
			s.down = false
		}
		s.check(false)
		if t.Failed() {
			t.Fatalf("after step %d (op %d, arg %d)", i/2, op, arg)
		}
	}
	if s.down {
		s.bridge.pl.setDown(false)
	}
	// The end: a bridge that is not armed, a marker per printer, every message answered.
	s.ensureRunning()
	if s.armed() {
		_ = s.bridge.child.Process.Signal(syscall.SIGTERM)
		<-s.died
		s.start("")
	}
	for _, p := range s.printers {
		id := fmt.Sprintf("marker-%s", p)
		s.send(seqMsg{printer: p, command: cmdPrintJob, id: id, kind: cmdPrintJob, payload: printJobCmd(id)})
	}
	eventually(t, "every message answered", func() bool {
		s.ensureRunning()
		return s.unanswered() == ""
	})
	for _, p := range s.printers {
		id := fmt.Sprintf("marker-%s", p)
		eventually(t, id+" sent", func() bool { return s.answered(p, cmdPrintJob, id, StateSent) })
	}
	s.check(true)
	_ = s.bridge.child.Process.Signal(syscall.SIGTERM)
	<-s.died
	s.t.Logf("%d steps, %d messages, %d bridge processes", len(program)/2, len(s.msgs), s.bridge.starts)
}

// restartPlant gives the rig's plant the two printers of the sequence and a config naming both.
func (s *seqRun) restartPlant() {
	r := s.bridge
	pl := startPlant(s.t, s.printers...)
	r.pl = pl
	var b strings.Builder
	fmt.Fprintf(&b, "broker: {url: %q, client_id: %q}\ntopic_prefix: %q\nstate_dir: %q\npoll_interval: 200ms\nprinters:\n",
		r.bk.URL(), strings.ReplaceAll(r.prefix, "/", "-"), r.prefix, r.dir+"/state")
	for _, p := range s.printers {
		fmt.Fprintf(&b, "  - {name: %s, url: %q, printer: %s}\n", p, pl.URL, p)
	}
	r.cfg = writeFile(s.t, r.dir, "bridge.yml", b.String())
}

func (s *seqRun) armed() bool {
	for _, e := range s.bridge.child.Env {
		if strings.HasPrefix(e, crashAtEnv+"=") {
			return true
		}
	}
	return false
}

// start runs a bridge (armed to die at crashAt when set, at once) and notes when it dies.
func (s *seqRun) start(crashAt string) {
	r := s.bridge
	r.starts++
	before := r.onlines()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+r.cfg)
	if crashAt != "" {
		cmd.Env = append(cmd.Env, crashAtEnv+"="+crashAt)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	died := make(chan struct{})
	go func() { _ = cmd.Wait(); close(died) }()
	s.t.Cleanup(func() { _ = cmd.Process.Kill(); <-died })
	r.child, s.died = cmd, died
	eventually(s.t, fmt.Sprintf("bridge %d online", r.starts), func() bool {
		select {
		case <-died:
			return true // died at once (a redelivered command met its crash point)
		default:
		}
		return r.onlines() > before
	})
}

func (s *seqRun) dead() bool {
	select {
	case <-s.died:
		return true
	default:
		return false
	}
}

// ensureRunning restarts a bridge that died at its crash point, unarmed.
func (s *seqRun) ensureRunning() {
	for s.dead() {
		s.start("")
	}
}

func (s *seqRun) send(m seqMsg) {
	s.msgs = append(s.msgs, m)
	n := len(s.answersOf(m))
	s.bridge.s.send(s.bridge.prefix+"/"+m.printer+"/cmd/"+m.command, m.payload)
	if !s.wait {
		return
	}
	// The embedded broker can lose a message published while the bridge reconnects (see
	// the README), so against it each message is answered, or the bridge dead, first.
	eventually(s.t, "an answer to "+m.id, func() bool {
		return s.dead() || len(s.answersOf(m)) > n
	})
	s.ensureRunning()
}

func (s *seqRun) answersOf(m seqMsg) []Result {
	var out []Result
	for _, res := range s.bridge.w.results(s.bridge.prefix + "/" + m.printer + "/result") {
		if res.ID == m.id && res.Command == m.command {
			out = append(out, res)
		}
	}
	return out
}

func (s *seqRun) answered(printer, command, id string, state string) bool {
	for _, res := range s.answersOf(seqMsg{printer: printer, command: command, id: id}) {
		if res.State == state {
			return true
		}
	}
	return false
}

func (s *seqRun) step(op, arg int) {
	p := s.printers[arg%2]
	id := func(k string) string { s.next++; return fmt.Sprintf("%s-%d", k, s.next) }
	switch op {
	case seqPrintJob:
		j := id("j")
		if arg&4 != 0 { // the printer takes it and hangs up: unknown
			s.bridge.pl.mu.Lock()
			s.bridge.pl.hangUp[j] = true
			s.bridge.pl.mu.Unlock()
		}
		s.jobs[p] = append(s.jobs[p], j)
		s.send(seqMsg{printer: p, command: cmdPrintJob, id: j, kind: cmdPrintJob, payload: printJobCmd(j)})
	case seqDeselect:
		d := id("d")
		s.send(seqMsg{printer: p, command: cmdPrintJob, id: d, kind: "deselect", payload: map[string]any{"id": d}})
	case seqTrigger:
		g := id("t")
		s.send(seqMsg{printer: p, command: cmdTrigger, id: g, kind: cmdTrigger, payload: map[string]any{"id": g}})
	case seqAbort:
		if s.down { // an abortPrint to a printer away waits out its retries: not this test's subject
			return
		}
		a := id("a")
		s.send(seqMsg{printer: p, command: cmdAbortPrint, id: a, kind: cmdAbortPrint, payload: map[string]any{"id": a}})
	case seqCancel, seqResend:
		target := "none"
		if js := s.jobs[p]; len(js) > 0 {
			target = js[(arg/2)%len(js)]
		}
		cmd := cmdCancel
		if op == seqResend {
			cmd = cmdResend
		}
		payload := map[string]any{"id": target, "attempts": 0}
		if arg&8 != 0 { // name the attempts of its last unknown answer
			for _, res := range s.answersOf(seqMsg{printer: p, command: cmdPrintJob, id: target}) {
				if res.State == StateUnknown {
					payload["attempts"] = res.Attempts
				}
			}
		}
		s.send(seqMsg{printer: p, command: cmd, id: target, kind: cmd, payload: payload})
	case seqAgain:
		var own []seqMsg
		for _, m := range s.msgs {
			if m.kind != cmdCancel && m.kind != cmdResend {
				own = append(own, m)
			}
		}
		if len(own) > 0 {
			m := own[arg%len(own)]
			if m.kind == cmdAbortPrint && s.down {
				return
			}
			s.send(m)
		}
	case seqArm:
		s.ensureRunning()
		_ = s.bridge.child.Process.Signal(syscall.SIGTERM)
		<-s.died
		k, point := seqKinds[(arg/3)%len(seqKinds)], seqPoints[arg%3]
		s.start(k + ":" + point)
	case seqKill:
		time.Sleep(time.Duration(arg%20) * time.Millisecond)
		_ = s.bridge.child.Process.Kill()
		<-s.died
		s.start("")
	case seqOffline:
		s.bridge.pl.setDown(true)
		s.down = true
	}
	if s.wait {
		s.ensureRunning()
	}
}

// check holds the invariant: each message took effect at most once at the printer; with
// final, every message was answered and executed at most once.
func (s *seqRun) check(final bool) {
	t, pl := s.t, s.bridge.pl
	sent := map[string]int{} // kind/printer (or job id) -> messages
	for _, m := range s.msgs {
		switch m.kind {
		case cmdResend:
			sent["job/"+m.id]++
		case cmdPrintJob:
			sent["job/"+m.id] += 0
		default:
			sent[m.kind+"/"+m.printer] += 0
		}
	}
	distinct := map[string]bool{}
	for _, m := range s.msgs {
		if m.kind == cmdCancel || m.kind == cmdResend || distinct[m.printer+"/"+m.id+"/"+m.command] {
			continue
		}
		distinct[m.printer+"/"+m.id+"/"+m.command] = true
		if m.kind != cmdPrintJob {
			sent[m.kind+"/"+m.printer]++
		}
	}
	for key, n := range sent {
		if id, ok := strings.CutPrefix(key, "job/"); ok {
			if got := pl.printed(id); got > 1+n {
				t.Errorf("print job %s reached the printer %d times: once, and %d resend messages", id, got, n)
			}
		}
	}
	for _, p := range s.printers {
		deselects := 0
		for _, d := range pl.arrivals(p) {
			if d == "<deselect>" {
				deselects++
			}
		}
		if deselects > sent["deselect/"+p] {
			t.Errorf("%s received %d deselects for %d deselect commands", p, deselects, sent["deselect/"+p])
		}
	}
	for _, k := range []string{cmdTrigger, cmdAbortPrint} {
		total := sent[k+"/line1"] + sent[k+"/line2"]
		if got := pl.Sim.Requests("POST", "/api/v3/printers/{name}/"+k); got > total {
			t.Errorf("the printers received %d %s requests for %d %s commands", got, k, total, k)
		}
	}
	if !final {
		return
	}
	if u := s.unanswered(); u != "" {
		t.Errorf("unanswered: %s", u)
	}
	// Executed at most once: one queued (or done/failed for abortPrint) per own id.
	for key := range distinct {
		parts := strings.SplitN(key, "/", 3)
		executed := 0
		for _, res := range s.answersOf(seqMsg{printer: parts[0], id: parts[1], command: parts[2]}) {
			if res.State == StateQueued || res.State == StateDone || res.State == StateFailed {
				executed++
			}
		}
		if executed > 1 {
			t.Errorf("%s executed %d times", key, executed)
		}
	}
}

// unanswered names a message with fewer answers than messages sent with its id, or "".
func (s *seqRun) unanswered() string {
	count := map[string]int{}
	for _, m := range s.msgs {
		count[m.printer+"/"+m.command+"/"+m.id]++
	}
	for _, m := range s.msgs {
		k := m.printer + "/" + m.command + "/" + m.id
		if got := len(s.answersOf(m)); got < count[k] {
			return fmt.Sprintf("%s: %d answers to %d messages", k, got, count[k])
		}
	}
	return ""
}
