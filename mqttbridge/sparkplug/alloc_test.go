package sparkplug

import (
	"bytes"
	"runtime"
	"testing"
)

// adversarial returns payloads of about n bytes that make Unmarshal allocate the most per
// input byte: the smallest messages, each decoded into a struct or a slot.
func adversarial(n int) map[string][]byte {
	rep := func(unit []byte) []byte { return bytes.Repeat(unit, n/len(unit)) }
	dataset := func(inner []byte) []byte {
		m := appendLen([]byte{0x0a, 1, 'm', 0x20, byte(DataSetType), 0x8a, 0x01}, inner)
		return appendLen([]byte{0x12}, m)
	}
	props := func(inner []byte) []byte {
		return appendLen([]byte{0x12}, appendLen([]byte{0x4a}, inner))
	}
	return map[string][]byte{
		"empty metrics":          rep([]byte{0x12, 0x00}),
		"empty DataSet elements": dataset(appendLen([]byte{0x22}, rep([]byte{0x0a, 0x00}))),
		"empty DataSet rows":     dataset(rep([]byte{0x22, 0x00})),
		"packed DataSet types":   dataset(appendLen([]byte{0x1a}, rep([]byte{0x01}))),
		"empty property values":  props(rep([]byte{0x12, 0x00})),
		"empty property keys":    props(rep([]byte{0x0a, 0x00})),
		"metric names":           rep([]byte{0x12, 0x03, 0x0a, 0x01, 'm'}),
		"empty metadata":         rep([]byte{0x12, 0x02, 0x42, 0x00}),
		"empty properties":       rep([]byte{0x12, 0x02, 0x4a, 0x00}),
		"empty templates":        rep([]byte{0x12, 0x05, 0x20, byte(TemplateType), 0x92, 0x01, 0x00}),
		"empty DataSets":         rep([]byte{0x12, 0x05, 0x20, byte(DataSetType), 0x8a, 0x01, 0x00}),
		"empty property sets":    props(rep([]byte{0x12, 0x04, 0x08, byte(PropertySetType), 0x4a, 0x00})),
	}
}

// TestUnmarshalAllocation: the most Unmarshal allocates for a payload of 1 MiB built to make it
// allocate the most, per input byte, bounds what its doc comment promises.
func TestUnmarshalAllocation(t *testing.T) {
	// Bytes allocated per input byte: the doc comment says 48, the most measured (a megabyte of
	// metrics holding empty metadata); 50 leaves room for the runtime's own.
	const bound = 50
	for name, b := range adversarial(1 << 20) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p, err := Unmarshal(b)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runtime.KeepAlive(p)
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(b))
		t.Logf("%s: %d bytes, %.1f bytes allocated per byte", name, len(b), per)
		if per > bound {
			t.Errorf("%s: %.1f bytes allocated per input byte, more than %d", name, per, bound)
		}
	}
}
