package mqttbridge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// mqttJSVersion is the release of npm mqtt the Tahu host runs on; .ci/run installs it beside
// sparkplug-payload (whose version mqttbridge/sparkplug's tahu_test.go pins).
const mqttJSVersion = "5.16.0"

// tahuHostNPM returns node and the directory holding node_modules/sparkplug-payload and
// node_modules/mqtt (LABELPRINTER_SPARKPLUG_NPM_DIR); it skips the test when they are missing,
// or fails it when LABELPRINTER_REQUIRE_SPARKPLUG_NPM=1.
func tahuHostNPM(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv("LABELPRINTER_SPARKPLUG_NPM_DIR")
	node, err := exec.LookPath("node")
	msg := ""
	switch {
	case err != nil:
		msg = "node not found"
	case dir == "":
		msg = "LABELPRINTER_SPARKPLUG_NPM_DIR not set"
	default:
		for _, pkg := range []string{"sparkplug-payload", "mqtt"} {
			b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
			var p struct{ Version string }
			if err == nil {
				err = json.Unmarshal(b, &p)
			}
			switch {
			case err != nil:
				msg = fmt.Sprintf("%s not found in %s (%v)", pkg, dir, err)
			case pkg == "mqtt" && p.Version != mqttJSVersion:
				msg = fmt.Sprintf("mqtt %s in %s, not %s", p.Version, dir, mqttJSVersion)
			}
		}
	}
	if msg == "" {
		return node, dir
	}
	if os.Getenv("LABELPRINTER_REQUIRE_SPARKPLUG_NPM") == "1" {
		t.Fatal(msg + " and LABELPRINTER_REQUIRE_SPARKPLUG_NPM=1")
	}
	t.Skipf("%s: to run the Tahu host, install node (Debian: apt-get install nodejs npm), run npm install --prefix DIR "+
		"sparkplug-payload@1.0.3 mqtt@%s and set LABELPRINTER_SPARKPLUG_NPM_DIR=DIR", msg, mqttJSVersion)
	return "", ""
}

// tahuMetric and tahuMsg are what testdata/tahuhost.js writes for each message it decodes.
type tahuMetric struct {
	Name  string `json:"name"`
	Alias string `json:"alias"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type tahuMsg struct {
	Topic      string       `json:"topic"`
	Type       string       `json:"type"`
	Device     string       `json:"device"`
	Seq        string       `json:"seq"`
	Metrics    []tahuMetric `json:"metrics"`
	Error      string       `json:"error"`
	Subscribed bool         `json:"subscribed"`
	Sent       int          `json:"sent"`
}

// tahuHost is testdata/tahuhost.js running: a host on Tahu's codec and npm mqtt.
type tahuHost struct {
	t     *testing.T
	edge  string
	stdin io.WriteCloser
	mu    sync.Mutex
	msgs  []tahuMsg
	sent  int
}

func startTahuHost(t *testing.T, brokerURL, group, edge string) *tahuHost {
	t.Helper()
	node, dir := tahuHostNPM(t)
	cmd := exec.Command(node, filepath.Join("testdata", "tahuhost.js"), dir, brokerURL, group)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &tahuHost{t: t, edge: edge, stdin: stdin}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m tahuMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m.Error = fmt.Sprintf("a line that is not JSON: %q", sc.Bytes())
			}
			h.mu.Lock()
			h.msgs = append(h.msgs, m)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close() // the host disconnects and exits
		select {
		case <-done:
		case <-time.After(waitLimit):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
	})
	eventually(t, "the Tahu host subscribed", func() bool {
		for _, m := range h.all() {
			if m.Subscribed {
				return true
			}
		}
		return false
	})
	return h
}

func (h *tahuHost) all() []tahuMsg {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]tahuMsg(nil), h.msgs...)
}

// of returns the decoded messages of a type (NBIRTH, DDATA, ...).
func (h *tahuHost) of(typ string) []tahuMsg {
	var out []tahuMsg
	for _, m := range h.all() {
		if m.Type == typ {
			out = append(out, m)
		}
	}
	return out
}

// write encodes a DCMD (an NCMD when device is "") with Tahu's codec and publishes it.
func (h *tahuHost) write(device string, metrics ...map[string]any) {
	h.t.Helper()
	b, err := json.Marshal(map[string]any{"edge": h.edge, "device": device, "metrics": metrics})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.stdin.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
	h.sent++
	n := h.sent
	eventually(h.t, "the Tahu host's command published", func() bool {
		for _, m := range h.all() {
			if m.Sent >= n {
				return true
			}
		}
		return false
	})
}

func stringMetric(name string, v any) map[string]any {
	b, _ := json.Marshal(v)
	return map[string]any{"name": name, "type": "String", "value": string(b)}
}

// lastResults are the Command/LastResult values the host decoded, in order.
func (h *tahuHost) lastResults() []Result {
	var out []Result
	for _, m := range h.of("DDATA") {
		for _, x := range m.Metrics {
			if x.Name != "Command/LastResult" {
				continue
			}
			s, _ := x.Value.(string)
			var r Result
			if err := json.Unmarshal([]byte(s), &r); err != nil {
				h.t.Errorf("Command/LastResult %q: %v", s, err)
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

func (h *tahuHost) answered(id string, states ...string) bool {
	for _, r := range h.lastResults() {
		if r.ID == id && (len(states) == 0 || contains(states, r.State)) {
			return true
		}
	}
	return false
}

// TestSparkplugTahuHost: a host independent of the module, on Eclipse Tahu's JavaScript codec
// and npm mqtt, against mosquitto. It decodes every birth and data message the bridge's edge
// node sends (the births declare the metrics with their datatypes), writes each
// command and gets an outcome for each, is refused for a print without an id, and retries
// each of six prints, blindly, across a SIGKILL of the bridge (three written just before it,
// three while no bridge runs) and its restart, until each is answered and once more: the
// simulator prints each id at most once, and once for every one answered sent.
func TestSparkplugTahuHost(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	if testing.Short() {
		t.Skip("starts a bridge process, node and mosquitto")
	}
	tahuHostNPM(t)
	bin := mosquittoBin(t)
	if bin == "" {
		t.Skip("mosquitto is not installed (Debian: apt-get install mosquitto); MQTTBRIDGE_MOSQUITTO=required makes this a failure")
	}
	bk := newMosquitto(t, bin)
	r := newRig(t, bk, "tahu")
	b, err := os.ReadFile(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.cfg = writeFile(t, r.dir, "bridge.yml", string(b)+"sparkplug: {group_id: tahu, edge_node_id: edge-t}\n")
	h := startTahuHost(t, bk.URL(), "tahu", "edge-t")
	r.start("")
	eventually(t, "the births, decoded by Tahu", func() bool { return len(h.of("NBIRTH")) >= 1 && len(h.of("DBIRTH")) >= 1 })

	// The births, as Tahu reads them.
	types := func(m tahuMsg) map[string]string {
		out := map[string]string{}
		for _, x := range m.Metrics {
			out[x.Name] = x.Type
		}
		return out
	}
	nb := types(h.of("NBIRTH")[0])
	for name, typ := range map[string]string{"bdSeq": "Int64", "Node Control/Rebirth": "Boolean", "Node Info/Software": "String"} {
		if nb[name] != typ {
			t.Errorf("NBIRTH: %s is %q, want %s (NBIRTH %v)", name, nb[name], typ, nb)
		}
	}
	db := h.of("DBIRTH")[0]
	if db.Device != r.printer {
		t.Errorf("DBIRTH for %q", db.Device)
	}
	want := map[string]string{
		"Status/State": "String", "Status/RAG": "String", "Status/Printable": "Boolean", "Status/Reachable": "Boolean",
		"Status/Reason": "String", "Counters/PrintedLabels": "Int64", "Counters/Triggers": "Int64",
		"Counters/TriggerBounces": "Int64", "Job/Label": "String", "Outbox/Pending": "Int64", "Outbox/Unknown": "Int64",
		"Command/PrintJob": "String", "Command/Trigger": "String", "Command/Deselect": "String", "Command/AbortPrint": "String",
		"Command/Resend": "String", "Command/Cancel": "String", "Command/LastResult": "String", "Command/Results": "DataSet",
	}
	got := types(db)
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("DBIRTH: %s is %q, want %s", name, got[name], typ)
		}
	}
	for _, x := range db.Metrics {
		if strings.HasPrefix(x.Name, "Command/") && x.Type == "String" && x.Name != "Command/LastResult" && x.Value != "" {
			t.Errorf("DBIRTH: %s = %v, want empty", x.Name, x.Value)
		}
	}

	// Each command, written with Tahu's codec.
	for _, c := range []struct {
		metric string
		value  map[string]any
	}{
		{"Command/PrintJob", printJobCmd("k-print")},
		{"Command/Deselect", map[string]any{"id": "k-deselect"}},
		{"Command/Trigger", map[string]any{"id": "k-trigger"}},
		{"Command/AbortPrint", map[string]any{"id": "k-abort"}},
		{"Command/Resend", map[string]any{"id": "k-none", "attempts": 1}},
		{"Command/Cancel", map[string]any{"id": "k-none", "attempts": 1}},
	} {
		h.write(r.printer, stringMetric(c.metric, c.value))
		id := c.value["id"].(string)
		eventually(t, c.metric+"'s outcome", func() bool {
			for _, res := range h.lastResults() {
				if res.ID == id && res.State != StateQueued && (c.metric != "Command/Cancel" || res.Command == cmdCancel) {
					return true
				}
			}
			return false
		})
	}
	if !h.answered("k-print", StateSent) {
		t.Errorf("k-print: %v, want sent", h.lastResults())
	}
	before := len(h.lastResults())
	h.write(r.printer, stringMetric("Command/PrintJob", map[string]any{"job": job("k-noid")}))
	eventually(t, "the id-less print refused", func() bool {
		for _, res := range h.lastResults()[before:] {
			if res.ID == "" && res.State == StateInvalid {
				return true
			}
		}
		return false
	})

	// Six prints, each retried blindly until it is answered, while the bridge is killed and
	// started again.
	ids := []string{"r1", "r2", "r3", "r4", "r5", "r6"}
	for _, id := range ids[:3] {
		h.write(r.printer, stringMetric("Command/PrintJob", printJobCmd(id)))
	}
	_ = r.child.Process.Kill()
	_ = r.child.Wait()
	for _, id := range ids[3:] { // to a node that is dead: lost
		h.write(r.printer, stringMetric("Command/PrintJob", printJobCmd(id)))
	}
	r.start("")
	// A host writes to a node it knows to be alive: the new NBIRTH and DBIRTH say so. A DCMD
	// written before the node subscribed again is lost (QoS 0, clean sessions), and retried.
	eventually(t, "the births after the restart", func() bool { return len(h.of("NBIRTH")) >= 2 && len(h.of("DBIRTH")) >= 2 })
	retryUntil := func(what string, done func(id string) bool) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for {
			var open []string
			for _, id := range ids {
				if !done(id) {
					open = append(open, id)
				}
			}
			if len(open) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s after %s: %v; results %+v", what, waitLimit, open, h.lastResults())
			}
			for _, id := range open {
				h.write(r.printer, stringMetric("Command/PrintJob", printJobCmd(id)))
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	retryUntil("unanswered", func(id string) bool {
		return h.answered(id, StateSent, StateDuplicate, StateUnknown, StateRejected)
	})
	// And again, answered or not, as a host that cannot tell lost from slow does: each is a
	// duplicate.
	retryUntil("no duplicate", func(id string) bool { return h.answered(id, StateDuplicate) })
	r.stop()

	for _, id := range append([]string{"k-print"}, ids...) {
		n := r.pl.printed(id)
		if n > 1 {
			t.Errorf("%s printed %d times", id, n)
		}
		if h.answered(id, StateSent) && n != 1 {
			t.Errorf("%s answered sent, printed %d times", id, n)
		}
	}
	if n := r.pl.printed("k-noid"); n != 0 {
		t.Errorf("the id-less print printed %d times", n)
	}
	var errs []string
	counts := map[string]int{}
	for _, m := range h.all() {
		if m.Error != "" {
			errs = append(errs, m.Topic+": "+m.Error)
		}
		if m.Type != "" {
			counts[m.Type]++
		}
	}
	if len(errs) > 0 {
		t.Errorf("Tahu could not decode: %v", errs)
	}
	var summary []string
	for k, n := range counts {
		summary = append(summary, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(summary)
	t.Logf("decoded by Tahu: %s; printed: %v", strings.Join(summary, ", "), func() map[string]int {
		out := map[string]int{}
		for _, id := range ids {
			out[id] = r.pl.printed(id)
		}
		return out
	}())
}
