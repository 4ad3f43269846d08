package label

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseRoundTrip: whatever Parse accepts is written back semantically equal to the input,
// and parsing that again gives the same label, written the same way; Validate never panics.
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
