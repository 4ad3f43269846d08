package outbox

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// FuzzJobRoundTrip: any job Enqueue accepts comes back from its stored body encoding to the
// same JSON, so what is sent after a restart is what was enqueued.
//
//	go test -run '^$' -fuzz '^FuzzJobRoundTrip$' -fuzztime 30s ./outbox
func FuzzJobRoundTrip(f *testing.F) {
	f.Add("L", "", "", "", "", 2, true, 0.0, "desc", "extra", `{"a":1}`, `{"objs":[]}`)
	f.Add("", "Label", "T", "SKU", "S1", 0, false, 1.5e-7, "<&>", "LABELNAME", `"x"`, ``)
	f.Add("é\x00", "", "T", "", "", 1, true, -3e21, "\xff", "copies", `null`, `[]`)
	f.Fuzz(func(t *testing.T, label, column, table, keyCol, key string, copies int, queue bool, delay float64, desc, extraKey, extraVal, labelData string) {
		j := labelprinter.PrintJob{
			LabelName: label, LabelColumn: column, TableName: table, KeyColumn: keyCol, Key: key,
			Copies: copies, Queue: labelprinter.Ptr(queue), PrintDelay: delay, Description: desc,
		}
		if labelData != "" {
			j.LabelData = json.RawMessage(labelData)
		}
		if extraKey != "" && json.Valid([]byte(extraVal)) {
			j.Extra = map[string]any{extraKey: json.RawMessage(extraVal)}
		}
		if j.Validate() != nil {
			return
		}
		body, err := j.MarshalJSON()
		if err != nil {
			return
		}
		back, err := decodeJob(body)
		if err != nil {
			t.Fatalf("decodeJob(%s): %v", body, err)
		}
		again, err := back.MarshalJSON()
		if err != nil {
			t.Fatalf("re-encoding %s: %v", body, err)
		}
		// Invalid UTF-8 is sent as U+FFFD escaped the first time and as the character itself
		// after a trip through the file: the same JSON value. From then on the bytes are stable.
		var v1, v2 any
		if json.Unmarshal(body, &v1) != nil || json.Unmarshal(again, &v2) != nil || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("round trip changed the job:\n%s\n%s", body, again)
		}
		back2, err := decodeJob(again)
		if err != nil {
			t.Fatal(err)
		}
		if third, _ := back2.MarshalJSON(); !bytes.Equal(third, again) {
			t.Fatalf("second round trip changed the bytes:\n%s\n%s", again, third)
		}
	})
}

// FuzzDecodeRecord: a damaged entry in the file is an error, never a panic, and a record that
// decodes survives being stored again.
//
//	go test -run '^$' -fuzz '^FuzzDecodeRecord$' -fuzztime 30s ./outbox
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"seq":1,"id":"a","printer":"line1","job":{"labelName":"L"},"expireAfter":86400000000000,"state":"pending","attempts":0,"enqueued":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"seq":2,"id":"b","job":{"labelName":"L","x":[1]},"state":"sent","response":{"q":1}}`))
	f.Add([]byte(`{"seq":3,"id":"c","job":[],"state":"unknown"}`))
	f.Add([]byte(`{"seq":4,"id":"d","printer":"line1","kind":"trigger","state":"pending"}`))
	f.Add([]byte(`{"seq":5,"id":"e","kind":"deselect","job":{},"state":"sent"}`))
	f.Add([]byte(`{"seq":6,"id":"f","kind":"print","job":{"labelName":"L"},"state":"sent"}`))
	f.Add([]byte(`{"seq":0}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		e, err := r.entry()
		if err != nil {
			return
		}
		stored, err := r.encode()
		if err != nil {
			t.Fatalf("encoding a decoded record: %v", err)
		}
		r2, err := decodeRecord(stored)
		if err != nil {
			t.Fatalf("a stored record does not decode: %v\n%s", err, stored)
		}
		if r2.ID != e.ID || r2.State != e.State || r2.Seq != r.Seq || r2.kind() != e.Kind {
			t.Fatalf("record changed: %+v vs %+v", r, r2)
		}
	})
}
