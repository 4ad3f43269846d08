package printersim

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLabelPutNamesTheProblem: a label PUT that is not a JSON object is a 400 saying what it
// is instead, as the controller answers a malformed body; unknown content is stored as sent.
func TestLabelPutNamesTheProblem(t *testing.T) {
	s := startSim(t)
	for body, want := range map[string]string{
		`[1,2]`:         "not an array",
		`"label"`:       "not a string",
		`3`:             "not a number",
		`null`:          "not null",
		`true`:          "not a boolean",
		`{"format":3,`:  "invalid JSON",
		`{"format":3}x`: "invalid JSON at byte 13",
		` `:             "not empty",
		`{"a":"\x01"}`:  "invalid JSON at byte",
	} {
		got := string(s.want("PUT", "/api/v3/labels/bad", "application/json", body, 400))
		if !strings.Contains(got, "body must be a JSON object") || !strings.Contains(got, want) {
			t.Errorf("PUT %q answered %s, want %q", body, got, want)
		}
	}
	odd := `{"format":3,"editorVersion":"4.1","objs":[{"type":"Ellipse","rx":1e400}],"n":123456789012345678901234567890}`
	s.want("PUT", "/api/v3/labels/odd", "application/json", odd, 204)
	if got, _ := s.srv.Sim.Label("odd"); string(got) != odd {
		t.Errorf("stored %s", got)
	}
	if got := string(s.want("GET", "/api/v3/labels/odd/simulation", "", "", 200)); got != odd {
		t.Errorf("a label without dynamic text is simulated as %s", got)
	}
}

// TestSimulationFillsDynamicText: /simulation fills the maker's codes at the simulator's
// clock with or without a row; {{Column}} needs the row and is left as written without one;
// codes the simulator cannot fill stay as written; numbers keep their spelling.
func TestSimulationFillsDynamicText(t *testing.T) {
	clock := &fakeClock{now: time.Date(2024, 10, 4, 10, 30, 0, 0, time.UTC)}
	s := startSim(t, WithClock(clock))
	s.want("PUT", "/api/v3/labels/L", "application/json",
		`{"format":3,"width":50.10,"objs":[{"type":"Text","text":"{{SKU}} best before {TIME;{YEAR}-{MONTH}-{DAYOFMONTH};+20weeks}","color":"{VARIABLE;Ink}"}]}`, 204)
	s.want("PUT", "/api/v3/tables/T", "application/json", `{"columns":["SKU"],"rows":[["A-1"]]}`, 204)
	text := func(b []byte) (string, string) {
		var l struct {
			Width json.RawMessage
			Objs  []struct{ Text, Color string }
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		if string(l.Width) != "50.10" {
			t.Errorf("width spelled %s", l.Width)
		}
		return l.Objs[0].Text, l.Objs[0].Color
	}
	got, color := text(s.want("GET", "/api/v3/labels/L/simulation", "", "", 200))
	if got != "{{SKU}} best before 2025-02-21" || color != "{VARIABLE;Ink}" {
		t.Errorf("without a row: %q %q", got, color)
	}
	clock.Add(24 * time.Hour)
	got, _ = text(s.want("GET", "/api/v3/labels/L/simulation?tableName=T&keyColumn=SKU&key=A-1", "", "", 200))
	if got != "A-1 best before 2025-02-22" {
		t.Errorf("with a row: %q", got)
	}
	if stored, _ := s.srv.Sim.Label("L"); !strings.Contains(string(stored), "{TIME;") {
		t.Errorf("the simulation changed the stored label: %s", stored)
	}
}

// TestPrintingFillsDynamicText: a trigger prints the label filled at the simulator's clock
// from the job's row, before printedColumn counts it.
func TestPrintingFillsDynamicText(t *testing.T) {
	clock := &fakeClock{now: time.Date(2024, 2, 28, 23, 0, 0, 0, time.UTC)}
	s := startSim(t, WithClock(clock))
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"objs":[{"type":"Text","text":"{{SKU}} #{{n}} {TIME;{DAYOFMONTH}.{MONTH};+1day}"}]}`, 204)
	s.want("PUT", "/api/v3/tables/T", "application/json", `{"columns":["SKU","n"],"rows":[["A",0],["B",5]]}`, 204)
	if _, ok := s.srv.Sim.LastPrinted(DefaultPrinter); ok {
		t.Error("LastPrinted before any print")
	}
	s.want("POST", "/api/v3/printers/"+DefaultPrinter+"/printJob", "application/json",
		`{"labelName":"L","tableName":"T","printedColumn":"n","copies":1}`, 200)
	for _, want := range []string{"A #0 29.02", "B #5 01.03"} {
		s.want("POST", "/api/v3/printers/"+DefaultPrinter+"/trigger", "", "", 200)
		got, ok := s.srv.Sim.LastPrinted(DefaultPrinter)
		if !ok || !strings.Contains(string(got), `"text":"`+want+`"`) {
			t.Errorf("printed %s, want %q", got, want)
		}
		clock.Add(24 * time.Hour)
	}
}

// TestSimulationBounded: /simulation of a label of 1 MB whose text nests 64 codes around its
// body allocates a small multiple of the label (each level copied the body and reported it,
// about 1 GB a request for 11 MB).
func TestSimulationBounded(t *testing.T) {
	s := startSim(t)
	body := strings.Repeat("x", 1<<20)
	lbl := `{"format":3,"width":50,"height":30,"objs":[{"type":"Text","text":"` +
		strings.Repeat("{VARIABLE;", 64) + body + strings.Repeat("}", 64) + `"}]}`
	s.want("PUT", "/api/v3/labels/L", "application/json", lbl, 204)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := s.want("GET", "/api/v3/labels/L/simulation", "", "", 200)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte label: %.1f MB allocated by /simulation (%.0f per byte)", len(lbl), float64(alloc)/1e6, float64(alloc)/float64(len(lbl)))
	if alloc > 48*uint64(len(lbl)) {
		t.Errorf("/simulation of a %d-byte label: %d bytes allocated, want at most 48 per byte", len(lbl), alloc)
	}
	if !strings.Contains(string(got), body) {
		t.Error("the text was not left as written")
	}
}
