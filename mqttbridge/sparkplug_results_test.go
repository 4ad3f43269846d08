package mqttbridge

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

// birthResults is the Command/Results of the i-th DBIRTH of device (-1: the last), as
// "id command state" rows.
func (h *spbHost) birthResults(device string, i int) []string {
	h.t.Helper()
	var births []*sparkplug.Payload
	for _, m := range h.msgs() {
		if m.topic.MessageType == "DBIRTH" && m.topic.DeviceID == device {
			births = append(births, m.pl)
		}
	}
	if i < 0 {
		i = len(births) + i
	}
	if i < 0 || i >= len(births) {
		h.t.Fatalf("no DBIRTH %d of %s (%d)", i, device, len(births))
	}
	for _, mt := range births[i].Metrics {
		if mt.Name != metricResults {
			continue
		}
		ds, ok := mt.Value.(*sparkplug.DataSet)
		if !ok {
			h.t.Fatalf("Command/Results is %T", mt.Value)
		}
		var out []string
		for _, r := range ds.Rows {
			out = append(out, fmt.Sprint(r[0], " ", r[1], " ", r[2]))
		}
		return out
	}
	h.t.Fatalf("no Command/Results in the DBIRTH of %s", device)
	return nil
}

// finalRows are the rows a restart keeps of the outcomes the host heard: each id's last state,
// in the order the ids reached it.
func finalRows(h *spbHost, device string, ids ...string) []string {
	var out []string
	for _, id := range ids {
		var last Result
		for _, r := range h.lastResults(device) {
			if r.ID == id {
				last = r
			}
		}
		out = append(out, fmt.Sprint(last.ID, " ", last.Command, " ", last.State))
	}
	return out
}

// spbResultCommands writes a print, a trigger and a second print, and waits for each to settle.
func spbResultCommands(t *testing.T, h *spbHost, edge string) []string {
	t.Helper()
	h.command(edge, "p1", spbCmd(spbPrintJob, printJobCmd("r1")))
	eventually(t, "r1 sent", func() bool { return contains(h.statesOf("p1", "r1"), StateSent) })
	h.command(edge, "p1", spbCmd(spbTrigger, map[string]any{"id": "r2"}))
	eventually(t, "r2 sent", func() bool { return contains(h.statesOf("p1", "r2"), StateSent) })
	h.command(edge, "p1", spbCmd(spbPrintJob, printJobCmd("r3")))
	eventually(t, "r3 sent", func() bool { return contains(h.statesOf("p1", "r3"), StateSent) })
	return []string{"r1", "r2", "r3"}
}

// TestSparkplugResultsAfterRestart: the DBIRTH of a bridge started again on the same state_dir
// carries in Command/Results the outcomes of the commands before the restart: each id, command
// and final state, in the order they settled.
func TestSparkplugResultsAfterRestart(t *testing.T) {
	bk := newEmbedded(t)
	pl := startPlant(t, "p1")
	h := newSpbHost(t, bk.URL(), "plant1")
	cfg := spbConfig(t, bk.URL(), pl, "p1")
	r := startBridge(t, cfg)
	eventually(t, "DBIRTH", func() bool { return h.count("DBIRTH") == 1 })
	ids := spbResultCommands(t, h, "bridge1")
	want := finalRows(h, "p1", ids...)
	r.stop(t)
	startBridge(t, cfg)
	eventually(t, "the second DBIRTH", func() bool { return h.count("DBIRTH") == 2 })
	if got := h.birthResults("p1", -1); !slices.Equal(got, want) {
		t.Errorf("Command/Results after the restart %q, want %q", got, want)
	}
}

// TestSparkplugResultsAfterFailover: the standby of a pair that takes over after the active
// bridge was killed is born with the outcomes the killed one gave in Command/Results, read from
// the queue in PostgreSQL.
func TestSparkplugResultsAfterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	dsn := pgtest.DSN(t)
	bk := newEmbedded(t)
	const ttl = 2 * time.Second
	pl := startPlant(t, "p1")
	dir := t.TempDir()
	clientID := fmt.Sprintf("spbresults-%d", time.Now().UnixNano())
	cfgPath := pairConfig(t, dir, bk.URL(), dsn, clientID, pl, ttl, "p1")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath = writeFile(t, dir, "bridge.yml", string(b)+"sparkplug: {group_id: plant1, edge_node_id: pair1}\n")
	h := newSpbHost(t, bk.URL(), "plant1")
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
	first := start()
	eventually(t, "the first DBIRTH", func() bool { return h.count("DBIRTH") == 1 })
	second := start()
	ids := spbResultCommands(t, h, "pair1")
	want := finalRows(h, "p1", ids...)
	_ = first.Process.Kill()
	_ = first.Wait()
	eventually(t, "the standby's DBIRTH", func() bool { return h.count("DBIRTH") == 2 })
	if got := h.birthResults("p1", -1); !slices.Equal(got, want) {
		t.Errorf("Command/Results after the failover %q, want %q", got, want)
	}
	_ = second.Process.Signal(syscall.SIGTERM)
	_ = second.Wait()
}
