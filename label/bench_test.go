package label

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// label50 is a label of 50 objects: texts, barcodes, GS1 symbols, lines and a group, cycling
// through the object types of every-type.json.
func label50(tb testing.TB) []byte {
	var doc struct{ Objs []json.RawMessage }
	if err := json.Unmarshal(readFile(tb, "every-type.json"), &doc); err != nil {
		tb.Fatal(err)
	}
	objs := make([]string, 50)
	for i := range objs {
		objs[i] = string(doc.Objs[i%len(doc.Objs)])
	}
	return []byte(fmt.Sprintf(`{"format":3,"width":100,"height":150,"objs":[%s]}`, strings.Join(objs, ",")))
}

// BenchmarkParseValidate50 reads and checks a 50-object label.
func BenchmarkParseValidate50(b *testing.B) {
	data := label50(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalMap50 is where a hand-written checker starts: the same label decoded into
// map[string]any, nothing checked.
func BenchmarkUnmarshalMap50(b *testing.B) {
	data := label50(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal50 writes the 50-object label back.
func BenchmarkMarshal50(b *testing.B) {
	l, err := Parse(label50(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseValidateWarnings50 is ParseValidate50 with the GS1 symbol rules' Warnings,
// as labels lint checks a label.
func BenchmarkParseValidateWarnings50(b *testing.B) {
	data := label50(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Validate(); err != nil {
			b.Fatal(err)
		}
		_ = l.Warnings(0)
	}
}
