package sparkplug

import (
	"bytes"
	"runtime"
	"strings"
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

// TestMarshalAllocation: Marshal writes every nested message in place, so a payload's
// allocations do not grow with its metrics: 64 metrics, each with a Quality property, half of
// them a String of a Command/LastResult's size, take the few allocations of the buffer's growth,
// not two or more per metric.
func TestMarshalAllocation(t *testing.T) {
	const metrics, bound = 64, 4
	pl := &Payload{Timestamp: 1764300000000, HasSeq: true, Seq: 7}
	for i := range metrics {
		m := Metric{HasAlias: true, Alias: uint64(64 + i), Timestamp: 1764300000000, Datatype: Int64, Value: int64(i),
			Properties: &PropertySet{Keys: []string{"Quality"}, Values: []PropertyValue{{Type: Int32, Value: int64(192)}}}}
		if i%2 == 1 {
			m.Datatype, m.Value = String, `{"id":"c`+strings.Repeat("x", 40)+`","command":"printJob","state":"sent","response":null,"time":"2026-11-28T03:18:04.123456789Z"}`
		}
		pl.Metrics = append(pl.Metrics, m)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := pl.Marshal(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%d metrics: %.0f allocations", metrics, allocs)
	if allocs > bound {
		t.Errorf("Marshal of %d metrics took %.0f allocations, more than %d", metrics, allocs, bound)
	}
}
