package mqttbridge

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The Sparkplug commands' redelivery and crash matrix. Hosts publish DCMD at QoS 0 on clean
// sessions: nothing is redelivered, and a host that did not hear back sends the same command
// again, with the same id. Each kind of the bridge's matrix (matrixKinds) is written as a
// Command/* metric: sent twice to one bridge, and sent to a bridge process killed by SIGKILL at
// each crash point, then sent again to the next process. The printer's journal shows the effect
// once and every answer agrees with it, as for the bridge's own topics.

// spbKinds maps each kind of the matrix to the metric a host writes and its JSON.
var spbKinds = map[string]struct {
	metric  string
	payload any
}{
	cmdPrintJob:   {spbPrintJob, printJobCmd("T")},
	"deselect":    {spbDeselect, map[string]any{"id": "T"}},
	cmdTrigger:    {spbTrigger, map[string]any{"id": "T"}},
	cmdAbortPrint: {spbAbortPrint, map[string]any{"id": "T"}},
	cmdCancel:     {spbCancel, map[string]any{"id": "X", "attempts": 1}},
	cmdResend:     {spbResend, map[string]any{"id": "X", "attempts": 1}},
}

// spbRig is a rig whose bridge also runs a Sparkplug node, with a host on the broker.
type spbRig struct {
	*rig
	edge string
	h    *spbHost
}

func newSpbRig(t *testing.T, bk testBroker, name string) *spbRig {
	t.Helper()
	r := newRig(t, bk, name)
	edge := strings.ReplaceAll(name, "/", "-")
	b, err := os.ReadFile(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b) + fmt.Sprintf("sparkplug: {group_id: once, edge_node_id: %q}\n", edge)
	r.cfg = writeFile(t, r.dir, "bridge.yml", cfg)
	return &spbRig{rig: r, edge: edge, h: newSpbHost(t, bk.URL(), "once")}
}

// births counts the NBIRTHs of the rig's node.
func (s *spbRig) births() int {
	n := 0
	for _, m := range s.h.msgs() {
		if m.topic.MessageType == "NBIRTH" && m.topic.EdgeNodeID == s.edge {
			n++
		}
	}
	return n
}

// start runs a bridge process (to die at crashAt when set) and waits for its node's NBIRTH.
func (s *spbRig) start(crashAt string) {
	s.t.Helper()
	n := s.births()
	s.rig.start(crashAt)
	eventually(s.t, "the node's NBIRTH", func() bool { return s.births() > n })
}

// write sends the matrix kind's command as a DCMD.
func (s *spbRig) write(kind string) {
	k := spbKinds[kind]
	s.h.command(s.edge, s.printer, spbCmd(k.metric, k.payload))
}

// TestSparkplugRedeliveryMatrix: each command kind written twice as a DCMD to one bridge, and
// written to a bridge process killed at each crash point and again to the next process (a
// host's retry with the same id). The printer's journal shows the command's effect once, the
// retry is answered, the command is executed (queued or done) at most once, and every answer
// agrees with the journal.
func TestSparkplugRedeliveryMatrix(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	eachBroker(t, func(t *testing.T, bk testBroker) {
		points := []string{"twice", crashBeforeCommit, crashAfterCommit, crashAfterResult}
		for i, mk := range matrixKinds {
			for j, point := range points {
				if !raceSubset(bk, i, j, len(points)) {
					continue
				}
				t.Run(mk.kind+"/"+point, func(t *testing.T) {
					testSpbRedelivery(t, bk, mk, point)
				})
			}
		}
	})
}

func testSpbRedelivery(t *testing.T, bk testBroker, mk matrixKind, point string) {
	r := newSpbRig(t, bk, fmt.Sprintf("spb-%s-%s-%d", mk.kind, point, time.Now().UnixNano()))
	crashAt := ""
	if point != "twice" {
		crashAt = mk.kind + ":" + point
	}
	r.start(crashAt)
	if mk.setup != nil {
		mk.setup(r.rig)
	}
	release := func() {}
	if mk.kind == cmdResend {
		release = r.holdJob("X")
	}
	r.write(mk.kind)
	if point == "twice" {
		// Settled first, so that each answer after is the retry's.
		eventually(t, "the first settled", func() bool { return r.has(mk.command, mk.id, StateSent, StateDone, StateUnknown) })
	} else {
		r.crash(func() bool { return mk.ready == nil || mk.ready(r.rig, point) })
	}
	release()
	before := len(r.answers(mk.command, mk.id))
	if point != "twice" {
		r.start("")
	}
	r.write(mk.kind) // the host's retry, with the same id
	eventually(t, "the retry answered", func() bool { return len(r.answers(mk.command, mk.id)) > before })
	r.marker("marker")
	r.stop()

	got := r.states(mk.command, mk.id)
	n := mk.effects(r.rig)
	t.Logf("answers %v (%d before the retry); effects at the printer: %d", got, before, n)
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
	if last := got[len(got)-1]; !strings.HasPrefix(last, StateDuplicate) && point != crashBeforeCommit {
		t.Errorf("the retry was answered %s, want duplicate", last)
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
	case n != mk.want:
		t.Errorf("the answers say it took effect (%v), the printer's journal shows %d effects, want %d", got, n, mk.want)
	}
	// The host heard the same answers on Command/LastResult as P/result carried.
	var spb []string
	for _, res := range r.h.lastResults(r.printer) {
		if res.ID == mk.id && res.Command == mk.command {
			s := res.State
			if res.Current != "" {
				s += "(" + res.Current + ")"
			}
			spb = append(spb, s)
		}
	}
	// A kill may take an outcome with it before the node published it; what it published is
	// in P/result's order.
	for _, s := range spb {
		if !contains(got, s) {
			t.Errorf("Command/LastResult said %s, which P/result did not (%v)", s, got)
		}
	}
	if len(spb) == 0 {
		t.Errorf("the host heard no Command/LastResult for %s", mk.id)
	}
}
