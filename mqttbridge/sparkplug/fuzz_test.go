package sparkplug

import (
	"bytes"
	"testing"
)

// FuzzUnmarshal: no input panics, and what Unmarshal accepts Marshal encodes, to bytes that
// decode and encode to the same bytes again.
func FuzzUnmarshal(f *testing.F) {
	b, err := allTypes().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0x12, 5, 0x10, 7, 0x50, 0xE9, 0x01})
	f.Add([]byte{0x12, 0x0a, 0x0a, 1, 'm', 0x20, 16, 0x8a, 0x01, 2, 0x1a, 0x00})
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Unmarshal(in)
		if err != nil {
			return
		}
		once, err := p.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a decoded payload: %v", err)
		}
		q, err := Unmarshal(once)
		if err != nil {
			t.Fatalf("Unmarshal of Marshal's bytes: %v", err)
		}
		twice, err := q.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable:\n% x\n% x", once, twice)
		}
	})
}

// FuzzParseTopic: no input panics, and a topic ParseTopic accepts prints as itself.
func FuzzParseTopic(f *testing.F) {
	for _, s := range []string{"spBv1.0/g/DCMD/e/d", "spBv1.0/STATE/h", "spBv1.0/g/NBIRTH/e", "spBv1.0/g/X/e/d/f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := ParseTopic(s)
		if err != nil {
			return
		}
		if tp.String() != s {
			t.Fatalf("%q parses as %+v, which prints as %q", s, tp, tp.String())
		}
		if err := tp.Validate(); err != nil {
			t.Fatalf("%q parses but does not validate: %v", s, err)
		}
	})
}

// FuzzParseState: no input panics, and a state ParseState accepts round-trips.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"online":true,"timestamp":1}`))
	f.Add([]byte(`{"online":false,"timestamp":18446744073709551615}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseState(in)
		if err != nil {
			return
		}
		if got, err := ParseState(s.Marshal()); err != nil || got != s {
			t.Fatalf("%q: %+v round-trips as %+v, %v", in, s, got, err)
		}
	})
}
