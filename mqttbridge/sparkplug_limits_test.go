package mqttbridge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

// TestSparkplugDCMDLimits: the node's CONNECT asks for the Maximum Packet Size of the bridge's
// own (limits.max_packet_size), so a DCMD larger than it never reaches the node and prints
// nothing; a DCMD of more than 64 metrics is refused whole with one Command/LastResult naming
// the cap, and none of its commands is taken.
func TestSparkplugDCMDLimits(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "p1")
		h := newSpbHost(t, bk.URL(), "plant1")
		cfg := spbConfig(t, bk.URL(), pl, "p1")
		cfg.Limits.MaxPacketSize = 4096
		startBridge(t, cfg)
		eventually(t, "DBIRTH", func() bool { return h.count("DBIRTH") == 1 })

		big := map[string]any{"id": "big", "job": map[string]any{"description": "big", "labelData": map[string]any{"text": strings.Repeat("x", 5000)}}}
		h.command("bridge1", "p1", spbCmd(spbPrintJob, big))
		var many []sparkplug.Metric
		for i := range maxDCMDMetrics + 1 {
			many = append(many, spbCmd(spbTrigger, map[string]any{"id": fmt.Sprintf("t%d", i)}))
		}
		h.command("bridge1", "p1", many...)
		// A DCMD of exactly the cap is taken: each of its commands is answered.
		h.command("bridge1", "p1", many[:maxDCMDMetrics]...)
		h.command("bridge1", "p1", spbCmd(spbPrintJob, printJobCmd("marker")))
		eventually(t, "marker sent", func() bool { return contains(h.statesOf("p1", "marker"), StateSent) })

		if got := h.statesOf("p1", "big"); len(got) != 0 {
			t.Errorf("the DCMD over limits.max_packet_size was answered %v", got)
		}
		if n := pl.printed("big"); n != 0 {
			t.Errorf("the DCMD over limits.max_packet_size printed %d labels", n)
		}
		refusals, answered := 0, map[string]bool{}
		for _, r := range h.lastResults("p1") {
			if r.State == StateInvalid && r.ID == "" && strings.Contains(r.Error, "over the cap of 64") {
				refusals++
			}
			if r.Command == cmdTrigger {
				answered[r.ID] = true
			}
		}
		if refusals != 1 {
			t.Errorf("the DCMD of %d metrics got %d refusals naming the cap, want 1", maxDCMDMetrics+1, refusals)
		}
		if len(answered) != maxDCMDMetrics || answered[fmt.Sprintf("t%d", maxDCMDMetrics)] {
			t.Errorf("the triggers answered are %d (t%d among them: %v), want the %d of the DCMD at the cap", len(answered), maxDCMDMetrics, answered[fmt.Sprintf("t%d", maxDCMDMetrics)], maxDCMDMetrics)
		}
	})
}
