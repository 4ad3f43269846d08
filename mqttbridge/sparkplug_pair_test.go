package mqttbridge

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestSparkplugPairFailover: of a pair only the lease holder runs the Sparkplug node. Its
// bdSeq is kept in PostgreSQL beside the lease, so the standby that takes over after the active
// one is killed connects with the killed one's bdSeq plus one, as the next start after a clean
// stop does; the host's retry of a print with the same id is answered duplicate by the new
// bridge, and the label printed once.
func TestSparkplugPairFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	dsn := pgtest.DSN(t)
	eachBroker(t, func(t *testing.T, bk testBroker) {
		const ttl = 2 * time.Second
		pl := startPlant(t, "p1")
		dir := t.TempDir()
		clientID := fmt.Sprintf("spbpair-%d", time.Now().UnixNano())
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
		bdSeqs := func(kind string) []int64 {
			var out []int64
			for _, m := range h.msgs() {
				if m.topic.MessageType == kind {
					out = append(out, bdSeqOf(t, m.pl))
				}
			}
			return out
		}
		first := start()
		eventually(t, "the first NBIRTH", func() bool { return h.count("NBIRTH") == 1 })
		second := start()
		time.Sleep(ttl) // the standby looks at the lease more than once
		if n := h.count("NBIRTH"); n != 1 {
			t.Fatalf("%d NBIRTHs with a standby: it runs a node of its own", n)
		}
		h.command("pair1", "p1", spbCmd(spbPrintJob, printJobCmd("j1")))
		eventually(t, "j1 sent", func() bool { return contains(h.statesOf("p1", "j1"), StateSent) })
		_ = first.Process.Kill()
		_ = first.Wait()
		eventually(t, "the Will's NDEATH", func() bool { return h.count("NDEATH") == 1 })
		eventually(t, "the standby's NBIRTH", func() bool { return h.count("NBIRTH") == 2 })
		h.command("pair1", "p1", spbCmd(spbPrintJob, printJobCmd("j1")))
		eventually(t, "the retry answered", func() bool { return contains(h.statesOf("p1", "j1"), StateDuplicate) })
		_ = second.Process.Signal(syscall.SIGTERM)
		if err := second.Wait(); err != nil {
			t.Fatalf("the second bridge did not stop cleanly: %v", err)
		}
		third := start()
		eventually(t, "the third NBIRTH", func() bool { return h.count("NBIRTH") == 3 })
		_ = third.Process.Signal(syscall.SIGTERM)
		_ = third.Wait()
		if n := pl.printed("j1"); n != 1 {
			t.Errorf("j1 reached the printer %d times, want 1", n)
		}
		births, deaths := bdSeqs("NBIRTH"), bdSeqs("NDEATH")
		t.Logf("NBIRTH bdSeqs %v, NDEATH bdSeqs %v", births, deaths)
		if fmt.Sprint(births) != fmt.Sprint([]int64{0, 1, 2}) {
			t.Errorf("NBIRTH bdSeqs %v, want 0 (first), 1 (the standby after the kill), 2 (a start after a clean stop)", births)
		}
		if len(deaths) == 0 || deaths[0] != 0 {
			t.Errorf("NDEATH bdSeqs %v: the killed bridge's Will carries 0", deaths)
		}
	})
}
