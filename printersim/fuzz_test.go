package printersim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The fuzz input is a program: each step is an operation byte followed by the bytes that pick
// its arguments from the pools below (a byte picks pool[b % len(pool)]; a missing byte is 0).

const (
	opPutLabel = iota
	opDeleteLabel
	opPutTable
	opDeleteTable
	opPrintJob
	opTrigger
	opPressTrigger
	opLineBeat
	opAbort
	opRead
	opSimulate
	opUnmatched
	opFault
	opResetCounters
	opCount
)

var (
	fzPrinters = []string{"line1", "line2", "", "zz"} // "" is the single-printer path
	fzNames    = []string{"L", "M", "T", "U"}
	// fzStrings fills every string a request carries: names, columns, keys, cells.
	fzStrings = []any{"", "L", "M", "T", "U", "SKU", "Label", "N", "Done", "a", "b", "Gone", 7}
	fzNumbers = []any{0, 1, 2, -1, 1.5, 2147483647, 2147483648, 99999999999, "2", true}
	fzCells   = []any{"L", "M", "a", "b", "", 0, 1, 2, -1, "2", true, nil, "Gone", 1e300}
	fzJobAttr = []string{"labelName", "labelColumn", "labelData", "tableName", "keyColumn", "key",
		"copies", "copiesColumn", "firstRow", "rowCount", "printedColumn", "queue"}
	fzLabelData = []any{map[string]any{"format": 3}, nil, "x"}
	fzBools     = []any{true, false, "yes"}
	fzReads     = []string{"/api/v3/printers/%s/printCounters", "/api/v3/printers/%s/printHistory?resolution=MINUTES",
		"/api/v3/status", "/api/v3/tables", "/api/v3/tables/T", "/api/v3/labels", "/api/v3/labels/L"}
	fzUnmatched = [][2]string{{"GET", "/"}, {"BREW", "/api/v3/labels"}, {"DELETE", "/api/v3/status"},
		{"GET", "/api/v3/printers/line1/nope"}, {"PUT", "/api/v4/tables/T"}}
	fzFaultRoutes = [][2]string{{"POST", "/api/v3/printers/{name}/printJob"}, {"POST", "/api/v3/printers/{name}/trigger"},
		{"PUT", "/api/v3/tables/{name}"}, {"GET", "/api/v3/printers/{name}/printCounters"}}
	fzFaultStatus = []int{500, 503, 429}
)

type fuzzReader struct{ b []byte }

func (r *fuzzReader) pick(n int) int {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return int(c) % n
}

// fuzzRun drives one program through a Simulator's handler and checks each answer.
type fuzzRun struct {
	t       *testing.T
	sim     *Simulator
	pending map[string][]int // injected fault statuses not yet used, by route key
}

func (f *fuzzRun) snapshot() map[string]Counters {
	out := map[string]Counters{}
	for _, p := range []string{"line1", "line2"} {
		out[p], _ = f.sim.Counters(p)
	}
	return out
}

// checkCounters fails when a printer's counters do not add up.
func (f *fuzzRun) checkCounters(step string) {
	for p, c := range f.snapshot() {
		if c.Triggers != c.PrintedLabels+c.TriggerBounces {
			f.t.Fatalf("%s: %s counters half-updated: %+v", step, p, c)
		}
	}
}

// do serves one request and checks the answer: a response was written, a 5xx only where a
// fault was injected for it, errors as {"message"}. It returns the status and body.
func (f *fuzzRun) do(method, target, body string) (int, []byte) {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = "127.0.0.1" // httptest names example.com, a host the simulator does not answer to
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	_, key := f.sim.mux.Handler(req)
	if key == "" {
		key = method + " " + req.URL.EscapedPath()
	}
	rec := httptest.NewRecorder()
	f.sim.ServeHTTP(rec, req)
	step := method + " " + target + " " + body
	code, b := rec.Code, rec.Body.Bytes()
	if q := f.pending[key]; len(q) > 0 {
		f.pending[key] = q[1:]
		if code != q[0] {
			f.t.Fatalf("%s: %d, want the injected %d", step, code, q[0])
		}
		return code, b
	}
	if code >= 500 {
		f.t.Fatalf("%s: %d with no fault injected: %s", step, code, b)
	}
	if code != http.StatusNoContent && len(b) == 0 {
		f.t.Fatalf("%s: %d with no body", step, code)
	}
	if code >= 400 {
		var e errorBody
		if json.Unmarshal(b, &e) != nil || e.Message == "" {
			f.t.Fatalf("%s: %d error body is not {\"message\"}: %q", step, code, b)
		}
	}
	return code, b
}

func printerPath(p, rest string) string {
	if p == "" {
		return "/api/v3/" + rest
	}
	return "/api/v3/printers/" + p + "/" + rest
}

// jobBody builds a printJob body: attributes absent or drawn from their pools.
func jobBody(r *fuzzReader) string {
	switch r.pick(8) {
	case 0:
		return ""
	case 1:
		return "{not json"
	}
	job := map[string]any{}
	for _, a := range fzJobAttr {
		var pool []any
		switch a {
		case "labelData":
			pool = fzLabelData
		case "copies", "firstRow", "rowCount":
			pool = fzNumbers
		case "queue":
			pool = fzBools
		default:
			pool = fzStrings
		}
		if i := r.pick(len(pool) + 1); i > 0 { // 0: absent
			job[a] = pool[i-1]
		}
	}
	b, _ := json.Marshal(job)
	return string(b)
}

func tableBody(r *fuzzReader) string {
	cols := make([]any, r.pick(5))
	for i := range cols {
		cols[i] = fzStrings[r.pick(len(fzStrings))]
	}
	rows := make([][]any, r.pick(4))
	for i := range rows {
		n := len(cols)
		if r.pick(8) == 7 { // a ragged row now and then
			n++
		}
		rows[i] = make([]any, n)
		for j := range rows[i] {
			rows[i][j] = fzCells[r.pick(len(fzCells))]
		}
	}
	b, _ := json.Marshal(map[string]any{"columns": cols, "rows": rows})
	return string(b)
}

func runProgram(t *testing.T, program []byte) {
	sim := New(WithPrinters("line1", "line2"), WithProcessingDelay(0))
	defer sim.Close()
	f := &fuzzRun{t: t, sim: sim, pending: map[string][]int{}}
	r := &fuzzReader{b: program}
	for steps := 0; len(r.b) > 0 && steps < 256; steps++ {
		before := f.snapshot()
		events := map[string]int{}
		for p := range before {
			events[p] = len(sim.PrintEvents(p))
		}
		printer := "" // the printer whose trigger this step pulls, if any
		op := r.pick(opCount)
		switch op {
		case opPutLabel:
			f.do("PUT", "/api/v3/labels/"+fzNames[r.pick(len(fzNames))], `{"format":3,"text":"{{Label}} {{SKU}}"}`)
		case opDeleteLabel:
			f.do("DELETE", "/api/v3/labels/"+fzNames[r.pick(len(fzNames))], "")
		case opPutTable:
			name := fzNames[r.pick(len(fzNames))]
			f.do("PUT", "/api/v3/tables/"+name, tableBody(r))
		case opDeleteTable:
			f.do("DELETE", "/api/v3/tables/"+fzNames[r.pick(len(fzNames))], "")
		case opPrintJob:
			p := fzPrinters[r.pick(len(fzPrinters))]
			f.do("POST", printerPath(p, "printJob"), jobBody(r))
		case opTrigger:
			p := fzPrinters[r.pick(len(fzPrinters))]
			if p == "" {
				p = "line1" // the contract has no single-printer trigger
			}
			code, b := f.do("POST", printerPath(p, "trigger"), "")
			after := f.snapshot()[p]
			want := before[p]
			switch code {
			case http.StatusOK:
				want.Triggers++
				want.PrintedLabels++
			case http.StatusConflict:
				want.Triggers++
				want.TriggerBounces++
			}
			if p != "zz" && after != want {
				t.Fatalf("trigger %s answered %d %s: counters %+v, want %+v", p, code, b, after, want)
			}
			printer = p
		case opPressTrigger:
			p := fzPrinters[r.pick(len(fzPrinters))]
			printed, err := sim.PressTrigger(p)
			if p == "" || p == "zz" {
				if err == nil {
					t.Fatalf("PressTrigger(%q): no error", p)
				}
				break
			}
			want := before[p]
			want.Triggers++
			if printed {
				want.PrintedLabels++
			} else {
				want.TriggerBounces++
			}
			if after := f.snapshot()[p]; err != nil || after != want {
				t.Fatalf("PressTrigger(%s) = %v, %v: counters %+v, want %+v", p, printed, err, after, want)
			}
			printer = p
		case opLineBeat:
			queued := map[string]bool{}
			for _, p := range []string{"line1", "line2"} {
				queued[p] = sim.QueueLength(p) > 0
			}
			sim.pressSelected()
			for p, c := range f.snapshot() {
				if d := c.Triggers - before[p].Triggers; queued[p] && d != 1 || !queued[p] && d != 0 {
					t.Fatalf("line beat: %s triggers moved by %d (job selected: %v)", p, d, queued[p])
				}
			}
			printer = "both"
		case opAbort:
			f.do("POST", printerPath(fzPrinters[r.pick(len(fzPrinters))], "abortPrint"), "")
		case opRead:
			path := fzReads[r.pick(len(fzReads))]
			if strings.Contains(path, "%s") {
				path = fmt.Sprintf(path, fzPrinters[r.pick(len(fzPrinters))])
				path = strings.Replace(path, "/printers//", "/", 1)
			}
			f.do("GET", path, "")
		case opSimulate:
			q := []string{}
			for _, k := range []string{"tableName", "keyColumn", "key"} {
				if i := r.pick(len(fzStrings) + 1); i > 0 {
					q = append(q, k+"="+fmt.Sprint(fzStrings[i-1]))
				}
			}
			f.do("GET", "/api/v3/labels/"+fzNames[r.pick(len(fzNames))]+"/simulation?"+strings.Join(q, "&"), "")
		case opUnmatched:
			u := fzUnmatched[r.pick(len(fzUnmatched))]
			f.do(u[0], u[1], "")
		case opFault:
			route, status := fzFaultRoutes[r.pick(len(fzFaultRoutes))], fzFaultStatus[r.pick(len(fzFaultStatus))]
			sim.InjectFault(Fault{Method: route[0], Route: route[1], Times: 1, Status: status})
			key := route[0] + " " + route[1]
			f.pending[key] = append(f.pending[key], status)
		case opResetCounters:
			p := fzPrinters[r.pick(2)]
			if err := sim.ResetCounters(p); err != nil {
				t.Fatal(err)
			}
			if c, _ := sim.Counters(p); c != (Counters{}) {
				t.Fatalf("ResetCounters(%s): %+v", p, c)
			}
			printer = p
		}
		f.checkCounters(fmt.Sprintf("step %d (op %d)", steps, op))
		// Only a trigger (or a reset) moves counters, and a print event comes with each label.
		for p, c := range f.snapshot() {
			if printer != p && printer != "both" && c != before[p] {
				t.Fatalf("step %d (op %d) moved %s's counters: %+v to %+v", steps, op, p, before[p], c)
			}
			if n := len(sim.PrintEvents(p)); op != opResetCounters && int64(n-events[p]) != c.PrintedLabels-before[p].PrintedLabels {
				t.Fatalf("step %d (op %d): %s has %d print events for %d labels printed", steps, op, p, n-events[p], c.PrintedLabels-before[p].PrintedLabels)
			}
		}
	}
	// Whatever happened, the simulator still serves and its queues stay in bounds.
	for _, p := range []string{"line1", "line2"} {
		if n := sim.QueueLength(p); n < 0 {
			t.Fatalf("%s queue length %d", p, n)
		}
		f.do("GET", printerPath(p, "printCounters"), "")
	}
}

// seed writes a fuzz input for readable seeds: ops and the pool indexes of their arguments.
type seed []byte

func (p seed) op(op int, args ...int) seed {
	p = append(p, byte(op))
	for _, a := range args {
		p = append(p, byte(a))
	}
	return p
}

func idx[T comparable](pool []T, v T) int {
	i := slices.Index(pool, v)
	if i < 0 {
		panic(fmt.Sprintf("%v not in pool", v))
	}
	return i
}

func strIdx(v string) int { return idx(fzStrings, any(v)) }
func celIdx(v any) int    { return idx(fzCells, v) }

// jobArgs returns the argument bytes of a printJob on line1 with the given attributes.
func jobArgs(attrs map[string]any) []int {
	out := []int{idx(fzPrinters, "line1"), 2}
	for _, a := range fzJobAttr {
		v, ok := attrs[a]
		switch {
		case !ok:
			out = append(out, 0)
		case a == "copies" || a == "firstRow" || a == "rowCount":
			out = append(out, idx(fzNumbers, v)+1)
		case a == "queue":
			out = append(out, idx(fzBools, v)+1)
		case a == "labelData":
			out = append(out, 1)
		default:
			out = append(out, strIdx(v.(string))+1)
		}
	}
	return out
}

// tableArgs returns the argument bytes of a table PUT of T with string columns and cells.
func tableArgs(cols []string, rows ...[]any) []int {
	out := []int{idx(fzNames, "T"), len(cols)}
	for _, c := range cols {
		out = append(out, strIdx(c))
	}
	out = append(out, len(rows))
	for _, row := range rows {
		out = append(out, 0)
		for _, c := range row {
			out = append(out, celIdx(c))
		}
	}
	return out
}

// FuzzRequestSequences drives random sequences of contract requests through the handler: it
// fails on a panic, a 5xx no fault injected, an answer without a body or a {"message"}, and
// counters a trigger left half-updated or an operation other than a trigger moved.
func FuzzRequestSequences(f *testing.F) {
	full := tableArgs([]string{"SKU", "Label", "N", "Done"}, []any{"a", "L", 2, 0}, []any{"b", "M", 1, 0})
	trigger := []int{idx(fzPrinters, "line1")}
	seeds := []seed{
		// The label column replaced away under a selected job (was an index panic).
		seed{}.op(opPutLabel, 0).op(opPutTable, full...).
			op(opPrintJob, jobArgs(map[string]any{"tableName": "T", "labelColumn": "Label", "keyColumn": "SKU", "key": "a"})...).
			op(opPutTable, tableArgs([]string{"SKU"}, []any{"a"})...).op(opTrigger, trigger...),
		// The same on the running line, with copies and printed columns.
		seed{}.op(opPutLabel, 0).op(opPutTable, full...).
			op(opPrintJob, jobArgs(map[string]any{"tableName": "T", "labelName": "L", "copiesColumn": "N", "printedColumn": "Done"})...).
			op(opLineBeat).op(opPutTable, tableArgs([]string{"SKU", "Label"}, []any{"a", "L"})...).op(opLineBeat).op(opPressTrigger, 0),
		// An empty keyColumn (was a panic).
		seed{}.op(opPutLabel, 0).op(opPutTable, full...).
			op(opPrintJob, jobArgs(map[string]any{"tableName": "T", "labelName": "L", "keyColumn": "", "key": "a"})...).op(opTrigger, trigger...),
		// Copies over the limit, a fault on trigger, the table deleted, paths outside the contract.
		seed{}.op(opPutLabel, 0).op(opPrintJob, jobArgs(map[string]any{"labelName": "L", "copies": 99999999999})...).
			op(opPrintJob, jobArgs(map[string]any{"labelName": "L", "copies": 2})...).
			op(opFault, 1, 1).op(opTrigger, trigger...).op(opTrigger, trigger...).op(opDeleteTable, 2).
			op(opUnmatched, 1).op(opRead, 0, 2).op(opSimulate, 1, 0, 0, 0).op(opResetCounters, 0).op(opAbort, 0),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, program []byte) {
		runProgram(t, program)
	})
}
