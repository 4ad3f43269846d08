package label

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnderflowKept: a number that underflows float64 (to 0, -0 or a subnormal that spells
// another decimal) is written back as it was read, as the README says of every number.
func TestUnderflowKept(t *testing.T) {
	for _, lit := range []string{"-1e-400", "1e-400", "1.2345e-320", "-2.5e-324"} {
		l, err := Parse([]byte(`{"format":3,"width":` + lit + `,"height":10,"objs":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `"width":`+lit+`,`) {
			t.Errorf("%s written back as %s", lit, out)
		}
		if ok, diff := sameJSON([]byte(`{"format":3,"width":`+lit+`,"height":10,"objs":[]}`), out); !ok {
			t.Errorf("%s: %s", lit, diff)
		}
	}
	// A subnormal whose shortest spelling is its literal is exact, and so is -0.
	for _, lit := range []string{"5e-324", "-0", "0e-400"} {
		l, _ := Parse([]byte(`{"width":` + lit + `}`))
		if len(l.lits) != 0 {
			t.Errorf("%s kept as a literal: %v", lit, l.lits)
		}
	}
}

// TestParseBOM: a file an editor wrote with a UTF-8 byte order mark is read as the label, and
// written back without it.
func TestParseBOM(t *testing.T) {
	l, err := Parse([]byte("\xef\xbb\xbf{\"format\":3,\"width\":50,\"height\":30,\"objs\":[]}"))
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(l); string(out) != `{"format":3,"width":50,"height":30,"objs":[]}` {
		t.Errorf("written back as %s", out)
	}
	if _, err := Parse([]byte("\xef\xbb\xbf[]")); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("a BOM before an array: %v", err)
	}
}
