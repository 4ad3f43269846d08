package label

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParseRoundTrip: whatever Parse accepts is written back semantically equal to the input,
// and parsing that again gives the same label, written the same way; Validate and Warnings
// never panic.
func FuzzParseRoundTrip(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"objs":[{"type":"GS1-128","apps":[["01","x"],{"id":"1","value":"2","k":null}]}],"x":1e999}`))
	f.Add([]byte(`{"objs":[{"type":"ObjectGroup","children":[{"type":"DataMatrix","size":{"width":1.5}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		_ = l.Validate()
		_ = l.Warnings(0)
		out, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if ok, why := sameJSON(data, out); !ok {
			t.Fatalf("written back differs: %s\nin:  %q\nout: %q", why, data, out)
		}
		l2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse of own output: %v\n%s", err, out)
		}
		out2, err := json.Marshal(l2)
		if err != nil {
			t.Fatalf("Marshal again: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("second round differs:\n%s\n%s", out, out2)
		}
	})
}

// FuzzExpand: Expand never panics or hangs, leaves text without braces alone, and reports
// exactly when it leaves a code unfilled.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"{YEAR}", "{TIME;{YEAR}-{MONTH};+20weeks-1day}", "{COUNTER;C;WIDTH=3;FORMAT={#2;A;B}}",
		"{{SKU}}", "{VARIABLE;{VARIABLE;v}}", "{COUNTER;C;FORMAT=#01}", "{SHIFTCODE;S}", "a}{", "{TIME;x;+999999years}"} {
		f.Add(s)
	}
	env := &Env{
		Clock:      func() time.Time { return time.Date(2024, 2, 29, 23, 59, 0, 0, time.UTC) },
		Variables:  map[string]string{"v": "v", "w": "{YEAR}"},
		Counters:   map[string]int64{"C": 7, "N": -5},
		ShiftCodes: map[string][]Shift{"S": {{Start: 0, Code: "X"}}},
		Row:        map[string]string{"SKU": "1"},
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Expand(s, env)
		if !strings.ContainsAny(s, "{}") && (got != s || err != nil) {
			t.Fatalf("Expand(%q) = %q, %v", s, got, err)
		}
		again, err2 := Expand(s, env)
		if again != got || (err == nil) != (err2 == nil) {
			t.Fatalf("Expand(%q) is not deterministic", s)
		}
	})
}
