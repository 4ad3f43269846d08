package printersim

import (
	"bytes"
	"image/png"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestUIKeptLabelsBounded: a label of 1 MiB stored anew before each of 32 prints (32 MiB of
// labels) leaves the page holding at most its budget of them (lowered to 8 MiB, so that the
// test is quick under the race detector), measured on the heap; the
// newest prints' pictures are drawn, the oldest say their label was let go, and a label many
// prints share counts once.
func TestUIKeptLabelsBounded(t *testing.T) {
	const n, size, budget = 32, 1 << 20, 8 << 20
	s := startSim(t, WithUI(), WithPictures(noisyDrawer))
	s.srv.Sim.mu.Lock()
	s.srv.Sim.ui.labels.budget = budget
	s.srv.Sim.mu.Unlock()
	s.srv.Sim.ui.render.close() // pictures are drawn by their URLs here, not behind the test
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3,"width":50,"height":30,"objs":[]}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L"}`, 200)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		big := `{"format":3,"width":50,"height":30,"objs":[],"note":"` + strconv.Itoa(i) + strings.Repeat("x", size) + `"}`
		s.want("PUT", "/api/v3/labels/L", "application/json", big, 204)
		s.want("POST", "/api/v3/printers/line1/trigger", "", "", 200)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	sim := s.srv.Sim
	sim.mu.Lock()
	counted := sim.ui.labels.bytes
	sim.mu.Unlock()
	t.Logf("%d prints of labels of %d MiB: heap %+.1f MiB, %.1f MiB of labels counted", n, size>>20, float64(growth)/(1<<20), float64(counted)/(1<<20))
	// The budget, the label the store holds, and the runtime's slack.
	if bound := int64(budget + size + 4<<20); growth > bound {
		t.Errorf("the heap grew by %.1f MiB over %d prints, more than %.1f", float64(growth)/(1<<20), n, float64(bound)/(1<<20))
	}
	if counted > budget {
		t.Errorf("%d bytes of labels counted, over %d", counted, budget)
	}
	if code, body := s.do("GET", "/ui/printers/line1/prints/"+strconv.Itoa(n)+".png", "", nil); code != 200 {
		t.Errorf("the newest picture: %d %s", code, body)
	} else if _, err := png.Decode(bytes.NewReader(body)); err != nil {
		t.Error(err)
	}
	if b := s.want("GET", "/ui/printers/line1/prints/1.png", "", "", 422); !strings.Contains(string(b), "no longer kept to draw") {
		t.Errorf("the oldest picture: %s", b)
	}

	// One label shared by 200 prints on each of 4 printers counts once.
	const shared = 16 << 10
	s = startSim(t, WithUI(), WithPrinters("line1", "line2", "line3", "line4"))
	sim = s.srv.Sim
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3,"width":50,"height":30,"objs":[],"note":"`+strings.Repeat("y", shared)+`"}`, 204)
	for _, p := range []string{"line1", "line2", "line3", "line4"} {
		s.want("POST", "/api/v3/printers/"+p+"/printJob", "application/json", `{"labelName":"L"}`, 200)
	}
	rounds := KeptPrints + 10 // prints leave the list too
	if raceDetector {
		rounds = 20
	}
	for range rounds {
		for _, p := range []string{"line1", "line2", "line3", "line4"} {
			s.want("POST", "/api/v3/printers/"+p+"/trigger", "", "", 200)
		}
	}
	sim.mu.Lock()
	counted, refs, fifo := sim.ui.labels.bytes, len(sim.ui.labels.refs), len(sim.ui.labels.fifo)
	sim.mu.Unlock()
	if counted != shared+len(`{"format":3,"width":50,"height":30,"objs":[],"note":""}`) || refs != 1 || fifo > 2*4*KeptPrints {
		t.Errorf("one label on 4 printers' %d prints each: %d bytes counted, %d labels, %d in the list", rounds, counted, refs, fifo)
	}
}
