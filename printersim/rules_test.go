package printersim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// errMessage returns the message of an error body.
func errMessage(t *testing.T, b []byte) string {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("error body %q: %v", b, err)
	}
	return e.Message
}

// TestStaleTableJobBounces: a table PUT that takes away what a selected job needs (a column it
// names, its row, the table) makes the next trigger a bounce that drops the job: 409 with a
// message saying what went, one trigger and one bounce counted, nothing printed.
func TestStaleTableJobBounces(t *testing.T) {
	const full = `{"columns":["SKU","Label","N","Done"],"rows":[["a","L",2,0],["b","L",1,0]]}`
	for _, tc := range []struct {
		name, job, put, want string
	}{
		{"labelColumn", `{"tableName":"T","labelColumn":"Label","keyColumn":"SKU","key":"a"}`,
			`{"columns":["SKU","N","Done"],"rows":[["a",2,0]]}`, `table "T" has no column "Label" any more`},
		{"copiesColumn", `{"tableName":"T","labelName":"L","copiesColumn":"N","keyColumn":"SKU","key":"a"}`,
			`{"columns":["SKU","Label","Done"],"rows":[["a","L",0]]}`, `table "T" has no column "N" any more`},
		{"printedColumn", `{"tableName":"T","labelName":"L","printedColumn":"Done","keyColumn":"SKU","key":"a"}`,
			`{"columns":["SKU","Label","N"],"rows":[["a","L",2]]}`, `table "T" has no column "Done" any more`},
		{"row", `{"tableName":"T","labelName":"L","firstRow":1}`,
			`{"columns":["SKU","Label","N","Done"],"rows":[["a","L",2,0]]}`, `table "T" has no row 1 any more`},
		{"label", `{"tableName":"T","labelColumn":"Label","keyColumn":"SKU","key":"a"}`,
			`{"columns":["SKU","Label","N","Done"],"rows":[["a","Gone",2,0]]}`, `no label "Gone"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSim(t)
			s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
			s.want("PUT", "/api/v3/tables/T", "application/json", full, 204)
			s.want("POST", "/api/v3/printers/line1/printJob", "application/json", tc.job, 200)
			s.want("PUT", "/api/v3/tables/T", "application/json", tc.put, 204)
			msg := errMessage(t, s.want("POST", "/api/v3/printers/line1/trigger", "", "", 409))
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "job dropped") {
				t.Errorf("bounce message %q, want %q and that the job was dropped", msg, tc.want)
			}
			if c := counters(t, s, "/api/v3/printCounters"); c != (Counters{Triggers: 1, TriggerBounces: 1}) {
				t.Errorf("counters %+v", c)
			}
			if n := s.srv.Sim.QueueLength("line1"); n != 0 {
				t.Errorf("queue length %d after the bounce", n)
			}
		})
	}
	t.Run("table deleted, line trigger", func(t *testing.T) {
		s := startSim(t)
		s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
		s.want("PUT", "/api/v3/tables/T", "application/json", full, 204)
		s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"tableName":"T","labelName":"L","printedColumn":"Done"}`, 200)
		s.want("DELETE", "/api/v3/tables/T", "", "", 204)
		if printed, err := s.srv.Sim.PressTrigger("line1"); printed || err != nil {
			t.Errorf("PressTrigger: %v, %v", printed, err)
		}
		if c, _ := s.srv.Sim.Counters("line1"); c != (Counters{Triggers: 1, TriggerBounces: 1}) {
			t.Errorf("counters %+v", c)
		}
	})
}

// TestEmptyNamesRefused: an attribute that names something cannot be empty, in a print job
// (each of the seven) and in a simulation's query; a table's columns need distinct names.
func TestEmptyNamesRefused(t *testing.T) {
	s := startSim(t)
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
	s.want("PUT", "/api/v3/tables/T", "application/json", `{"columns":["SKU","Label"],"rows":[["","L"]]}`, 204)
	for _, attr := range []string{"labelName", "labelColumn", "tableName", "keyColumn", "key", "copiesColumn", "printedColumn"} {
		job := map[string]any{"tableName": "T", "labelName": "L", "keyColumn": "SKU", "key": "x"}
		job[attr] = ""
		b, _ := json.Marshal(job)
		msg := errMessage(t, s.want("POST", "/api/v3/printers/line1/printJob", "application/json", string(b), 400))
		if !strings.Contains(msg, attr+" is empty") {
			t.Errorf("%s empty: message %q", attr, msg)
		}
	}
	for _, q := range []string{"tableName=&keyColumn=SKU&key=a", "tableName=T&keyColumn=&key=a", "tableName=T&keyColumn=SKU&key="} {
		s.want("GET", "/api/v3/labels/L/simulation?"+q, "", "", 400)
	}
	for body, want := range map[string]string{
		`{"columns":["A",""],"rows":[]}`:  "column 1 has no name",
		`{"columns":["A","A"],"rows":[]}`: `column "A" appears twice`,
	} {
		if msg := errMessage(t, s.want("PUT", "/api/v3/tables/U", "application/json", body, 400)); msg != want {
			t.Errorf("%s: message %q, want %q", body, msg, want)
		}
	}
	if c := counters(t, s, "/api/v3/printCounters"); c != (Counters{}) || s.srv.Sim.QueueLength("line1") != 0 {
		t.Errorf("a refused job changed the printer: %+v", c)
	}
}

// TestCountLimitsNamed: copies, firstRow and rowCount above MaxCount are refused with a message
// that names the limit and the value given; MaxCount itself is taken.
func TestCountLimitsNamed(t *testing.T) {
	s := startSim(t)
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
	s.want("PUT", "/api/v3/tables/T", "application/json", `{"columns":["SKU"],"rows":[["a"]]}`, 204)
	for _, attr := range []string{"copies", "firstRow", "rowCount"} {
		for _, v := range []string{"99999999999", "2147483648", "-1", "1.5"} {
			body := fmt.Sprintf(`{"labelName":"L","tableName":"T",%q:%s}`, attr, v)
			msg := errMessage(t, s.want("POST", "/api/v3/printers/line1/printJob", "application/json", body, 400))
			want := attr + " must be a whole number from 0 to " + strconv.Itoa(MaxCount) + ", not " + v
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q, want %q", body, msg, want)
			}
		}
	}
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L","copies":2147483647}`, 200)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L","tableName":"T","rowCount":2147483647}`, 200)
}

// TestUnmatchedRequestsShareOneCount: requests outside the contract, whatever their path or
// method, are counted under one key: the count map does not grow with them.
func TestUnmatchedRequestsShareOneCount(t *testing.T) {
	s := startSim(t)
	const n = 200
	for i := range n {
		method := "GET"
		if i%2 == 1 {
			method = "BREW" + strconv.Itoa(i)
		}
		code, _ := s.do(method, "/nope/"+strconv.Itoa(i), "", nil)
		if code != 404 && code != 405 {
			t.Fatalf("unknown path answered %d", code)
		}
	}
	s.want("DELETE", "/api/v3/status", "", "", 405) // a known path, a method it does not take
	s.want("GET", "/api/v3/labels", "", "", 200)
	sim := s.srv.Sim
	if got := sim.UnmatchedRequests(); got != n+1 {
		t.Errorf("UnmatchedRequests %d, want %d", got, n+1)
	}
	if got := sim.Requests("GET", "/nope/1"); got != 0 {
		t.Errorf("an unknown path has its own count: %d", got)
	}
	if got := sim.TotalRequests(); got != n+2 {
		t.Errorf("TotalRequests %d, want %d", got, n+2)
	}
	sim.mu.Lock()
	keys := len(sim.counts)
	sim.mu.Unlock()
	if keys != 1 {
		t.Errorf("%d keys in the count map, want 1 (the one contract route asked)", keys)
	}
}
