package mqttbridge

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/internal/spbjudge"
	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

// The bridge's edge node before the Sparkplug conformance judge (internal/spbjudge): the judge
// is the broker of the node's own connection (sparkplug.broker_url), the bridge's topics stay
// on a broker of the test's, and a host on the judge's broker writes the commands. The judge
// grades every client of its broker, so nothing but the node and that host connects to it.

// judgeVerdicts stops the judge once the bridge's last NDEATH is in, logs its summary and the
// verdicts it excuses, and fails the test for any other failed verdict.
func judgeVerdicts(t *testing.T, j *spbjudge.Judge, excuses []spbjudge.Excuse) []spbjudge.Result {
	t.Helper()
	res := j.Stop(t)
	failed, excused := spbjudge.Failed(res, excuses)
	t.Logf("judge: %s", spbjudge.Summary(res))
	for _, r := range excused {
		t.Logf("excused: %s", r)
	}
	for _, r := range failed {
		t.Errorf("judge: %s", r)
	}
	return res
}

func wantPass(t *testing.T, res []spbjudge.Result, id string, n int) {
	t.Helper()
	got := spbjudge.Of(res, id)
	if c := spbjudge.Count(got); len(got) != n || c["pass"] != n {
		t.Errorf("%s: %v, want %d pass", id, got, n)
	}
}

// TestSparkplugJudgeRebirthAndStop: one session of the bridge's edge node (its births, a print
// written as a DCMD and its outcome, a Rebirth written as an NCMD, a clean stop by SIGTERM)
// leaves the judge with no failed assertion but the one the issue excuses by name.
func TestSparkplugJudgeRebirthAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the conformance judge and a bridge process")
	}
	j := spbjudge.Start(t, "edge-node", spbjudge.Options{})
	r := newRig(t, newEmbedded(t), "judge-a")
	b, err := os.ReadFile(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.cfg = writeFile(t, r.dir, "bridge.yml", string(b)+fmt.Sprintf("sparkplug: {group_id: judge, edge_node_id: edge-a, broker_url: %q}\n", j.URL))
	h := newSpbHost(t, j.URL, "judge")
	r.start("")
	eventually(t, "the births", func() bool { return h.count("NBIRTH") == 1 && h.count("DBIRTH") == 1 })
	h.command("edge-a", r.printer, spbCmd(spbPrintJob, printJobCmd("j1")))
	eventually(t, "j1 sent", func() bool { return contains(h.statesOf(r.printer, "j1"), StateSent) })
	h.command("edge-a", "", sparkplug.Metric{Name: "Node Control/Rebirth", Datatype: sparkplug.Boolean, Value: true})
	eventually(t, "the Rebirth's births", func() bool { return h.count("NBIRTH") == 2 && h.count("DBIRTH") == 2 })
	r.stop()
	eventually(t, "the NDEATH", func() bool { return h.count("NDEATH") >= 1 })
	res := judgeVerdicts(t, j, spbjudge.Excused)
	for _, id := range []string{
		"tck-id-operational-behavior-data-commands-rebirth-action-2", // the NBIRTH after the Rebirth
		"tck-id-payloads-nbirth-bdseq-repeat",                        // its bdSeq, the Will's
	} {
		wantPass(t, res, id, 1)
	}
	if n := r.pl.printed("j1"); n != 1 {
		t.Errorf("j1 printed %d times", n)
	}
}

// TestSparkplugJudgeRestartsAndFailover: the edge node of a pair of bridges is stopped by
// SIGTERM and started again, its standby takes over when the active bridge is killed by
// SIGKILL, and a third process starts after the standby's clean stop. Each of the four
// sessions connects with the bdSeq one more than the last, kept in PostgreSQL beside the
// lease; the judge finds tck-id-topics-nbirth-bdseq-increment at each of the three reconnects
// and, per session, the NBIRTH's bdSeq equal to its own CONNECT's
// (tck-id-payloads-nbirth-bdseq-repeat). The verdicts the judge gets wrong across sessions
// are excused by name (spbjudge.AcrossSessions).
func TestSparkplugJudgeRestartsAndFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the conformance judge and bridge processes")
	}
	dsn := pgtest.DSN(t)
	j := spbjudge.Start(t, "edge-node", spbjudge.Options{})
	bk := newEmbedded(t)
	const ttl = 2 * time.Second
	pl := startPlant(t, "p1")
	dir := t.TempDir()
	clientID := fmt.Sprintf("spbjudge-%d", time.Now().UnixNano())
	cfgPath := pairConfig(t, dir, bk.URL(), dsn, clientID, pl, ttl, "p1")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath = writeFile(t, dir, "bridge.yml", string(b)+fmt.Sprintf("sparkplug: {group_id: judge, edge_node_id: pair-a, broker_url: %q}\n", j.URL))
	h := newSpbHost(t, j.URL, "judge")
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+cfgPath)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	stop := func(cmd *exec.Cmd) {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("a bridge did not stop cleanly: %v", err)
		}
	}
	// waitFor waits for the n-th message of kind; a clean stop may give two NDEATHs (the
	// node's and the Will it asks for), so the deaths are counted as they come.
	waitFor := func(kind string, n int) {
		eventually(t, fmt.Sprintf("%s %d", kind, n), func() bool { return h.count(kind) >= n })
	}
	deaths := 0
	waitDeath := func() {
		deaths++
		waitFor("NDEATH", deaths)
		deaths = h.count("NDEATH")
	}

	first := start()
	waitFor("NBIRTH", 1)
	stop(first) // SIGTERM
	waitDeath()
	first = start()
	waitFor("NBIRTH", 2)
	standby := start()
	_ = first.Process.Kill() // SIGKILL: the broker sends the Will, the standby takes the lease
	_ = first.Wait()
	waitDeath()
	waitFor("NBIRTH", 3)
	stop(standby)
	waitDeath()
	third := start()
	waitFor("NBIRTH", 4)
	stop(third)
	waitDeath()

	var bdSeqs []uint64
	for _, m := range h.msgs() {
		if m.topic.MessageType == "NBIRTH" {
			bdSeqs = append(bdSeqs, uint64(bdSeqOf(t, m.pl)))
		}
	}
	t.Logf("NBIRTH bdSeqs %v", bdSeqs)
	res := judgeVerdicts(t, j, spbjudge.AcrossSessions(bdSeqs, true))
	wantPass(t, res, "tck-id-topics-nbirth-bdseq-increment", 3)
	wantPass(t, res, "tck-id-payloads-nbirth-bdseq-repeat", 4)
}
