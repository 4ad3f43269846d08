package sparkplug

import (
	"bytes"
	"encoding/hex"
	"math"
	"reflect"
	"strings"
	"testing"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A Rebirth NCMD and an Int32 data message as a third-party edge node's documentation shows
// them on the wire, decoded field by field.
func TestUnmarshalKnownPayloads(t *testing.T) {
	b := mustHex(t, "08 9f af b8 f8 8d 31 12 23 0a 14 4E 6F 64 65 20 43 6F 6E 74 72 6F 6C 2F 52 65 62 69 72 74 68 18 9f af b8 f8 8d 31 20 0b 38 00 70 01 18 ff ff ff ff ff ff ff ff ff 01")
	p, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := &Payload{Timestamp: 1687369422751, HasSeq: true, Seq: math.MaxUint64, Metrics: []Metric{{
		Name: "Node Control/Rebirth", Timestamp: 1687369422751, Datatype: Boolean, Value: true}}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	// Marshal leaves out is_null=false (38 00), which proto2 need not send.
	enc, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w := bytes.Replace(b, mustHex(t, "38 00"), nil, 1)
	w[8] -= 2 // the metric's length
	if !bytes.Equal(enc, w) {
		t.Fatalf("Marshal gave % x\nwant % x", enc, w)
	}

	b = mustHex(t, "08 c0 b8 d8 9e 8e 31 12 0f 10 9a ef 02 18 c0 b8 d8 9e 8e 31 20 03 50 0f 18 ff ff ff ff ff ff ff ff ff 01")
	if p, err = Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	m := p.Metrics[0]
	if !m.HasAlias || m.Alias != 47002 || m.Datatype != Int32 || m.Value != int64(15) || m.Name != "" {
		t.Fatalf("got %+v", m)
	}
}

// allTypes is a payload with a metric of every datatype, with values at their ranges' ends,
// a DataSet, a PropertySet and a template.
func allTypes() *Payload {
	props := &PropertySet{Keys: []string{"Quality", "Engineering Units", "nested", "list", "none"},
		Values: []PropertyValue{
			{Type: Int32, Value: int64(192)},
			{Type: String, Value: "mm"},
			{Type: PropertySetType, Value: &PropertySet{Keys: []string{"a"}, Values: []PropertyValue{{Type: Boolean, Value: true}}}},
			{Type: PropertySetListType, Value: []*PropertySet{{Keys: []string{"b"}, Values: []PropertyValue{{Type: Double, Value: 2.5}}}}},
			{Type: Int64, IsNull: true},
		}}
	ds := &DataSet{NumOfColumns: 8, Columns: []string{"i8", "i32", "i64", "u32", "u64", "f", "b", "s"},
		Types: []DataType{Int8, Int32, Int64, UInt32, UInt64, Float, Boolean, String},
		Rows: [][]any{
			{int64(-128), int64(math.MinInt32), int64(math.MinInt64), uint64(math.MaxUint32), uint64(math.MaxUint64), float32(1.5), true, "x"},
			{int64(127), int64(math.MaxInt32), int64(math.MaxInt64), uint64(0), uint64(0), float32(-0.25), false, ""},
		}}
	tpl := &Template{Version: "v1", TemplateRef: "Printer", Metrics: []Metric{{Name: "Counter", Datatype: Int64, Value: int64(-7)}},
		Parameters: []Parameter{{Name: "p", Type: String, Value: "v"}, {Name: "q", Type: Int64, Value: int64(-1)}}}
	return &Payload{Timestamp: 1700000000000, HasSeq: true, Seq: 255, UUID: "u-1", Body: []byte{1, 2},
		Metrics: []Metric{
			{Name: "bdSeq", Datatype: Int64, Value: int64(3)},
			{Name: "i8min", Datatype: Int8, Value: int64(-128)},
			{Name: "i8max", Datatype: Int8, Value: int64(127)},
			{Name: "i16", Datatype: Int16, Value: int64(-32768)},
			{Name: "i32", Datatype: Int32, Value: int64(math.MinInt32)},
			{Name: "i64", Datatype: Int64, Value: int64(math.MinInt64)},
			{Name: "u8", Datatype: UInt8, Value: uint64(255)},
			{Name: "u16", Datatype: UInt16, Value: uint64(65535)},
			{Name: "u32", Datatype: UInt32, Value: uint64(math.MaxUint32)},
			{Name: "u64", Datatype: UInt64, Value: uint64(math.MaxUint64)},
			{Name: "f", Datatype: Float, Value: float32(3.25)},
			{Name: "d", Datatype: Double, Value: -1e300},
			{Name: "b", Datatype: Boolean, Value: false},
			{Name: "s", Datatype: String, Value: "Zeichen ✓"},
			{Name: "dt", Datatype: DateTime, Value: uint64(1700000000123)},
			{Name: "t", Datatype: Text, Value: "long"},
			{Name: "uuid", Datatype: UUID, Value: "123e4567-e89b-12d3-a456-426614174000"},
			{Name: "ds", Datatype: DataSetType, Value: ds},
			{Name: "bytes", Datatype: Bytes, Value: []byte{0, 255}},
			{Name: "file", Datatype: File, Value: []byte("PK"), MetaData: &MetaData{IsMultiPart: true, ContentType: "application/zip", Size: 2, Seq: 1, FileName: "a.zip", FileType: "zip", MD5: "x", Description: "d"}},
			{Name: "tpl", Datatype: TemplateType, Value: tpl},
			{Name: "i32arr", Datatype: Int32Array, Value: []byte{0x15, 0xCD, 0x5B, 0x07}},
			{Name: "alias", HasAlias: true, Alias: 1 << 40, Timestamp: 5, Datatype: String, Value: "", IsHistorical: true, IsTransient: true},
			{Name: "null", Datatype: String, IsNull: true, Properties: props},
		}}
}

func TestRoundTripEveryDatatype(t *testing.T) {
	p := allTypes()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		for i := range p.Metrics {
			if !reflect.DeepEqual(got.Metrics[i], p.Metrics[i]) {
				t.Errorf("metric %d: got %#v\nwant %#v", i, got.Metrics[i], p.Metrics[i])
			}
		}
		t.Fatalf("round trip differs")
	}
}

func TestMarshalTakesGoIntegersInRange(t *testing.T) {
	for _, c := range []struct {
		dt   DataType
		v    any
		want any
	}{
		{Int8, int8(-5), int64(-5)}, {Int16, 300, int64(300)}, {Int32, uint16(7), int64(7)},
		{Int64, uint32(9), int64(9)}, {UInt8, 255, uint64(255)}, {UInt32, int64(4e9), uint64(4e9)},
		{UInt64, uint(1), uint64(1)}, {DateTime, int64(1), uint64(1)}, {Double, float32(0.5), 0.5},
		{Float, 0.5, float32(0.5)},
	} {
		b, err := (&Payload{Metrics: []Metric{{Name: "m", Datatype: c.dt, Value: c.v}}}).Marshal()
		if err != nil {
			t.Errorf("%s %T %v: %v", c.dt, c.v, c.v, err)
			continue
		}
		p, err := Unmarshal(b)
		if err != nil || p.Metrics[0].Value != c.want {
			t.Errorf("%s %T %v: got %#v, %v; want %#v", c.dt, c.v, c.v, p.Metrics[0].Value, err, c.want)
		}
	}
}

func TestMarshalRefuses(t *testing.T) {
	for _, c := range []struct {
		m    Metric
		want string
	}{
		{Metric{Name: "a", Datatype: Int8, Value: 128}, `metric 0 ("a"): Int8 value 128 is out of range`},
		{Metric{Name: "a", Datatype: Int16, Value: -32769}, "Int16 value -32769 is out of range"},
		{Metric{Name: "a", Datatype: UInt8, Value: -1}, "UInt8 value -1 is out of range"},
		{Metric{Name: "a", Datatype: UInt32, Value: uint64(1) << 32}, "UInt32 value 4294967296 is out of range"},
		{Metric{Name: "a", Datatype: Int64, Value: uint64(math.MaxUint64)}, "out of range"},
		{Metric{Name: "a", Datatype: String, Value: 5}, "String value is a int"},
		{Metric{Name: "a", Datatype: Int32, Value: "5"}, "Int32 value is a string, not an integer"},
		{Metric{Name: "a", Datatype: Float, Value: 0.1}, "does not fit a float32"},
		{Metric{HasAlias: true, Alias: 4, Datatype: Boolean, Value: 1}, "metric 0 (alias 4): Boolean value is a int"},
		{Metric{Name: "a", Datatype: DataSetType, Value: &DataSet{Types: []DataType{Bytes}, Rows: [][]any{{[]byte{1}}}}}, "row 0 column 0: Bytes values cannot be sent here"},
		{Metric{Name: "a", Datatype: Unknown, Value: struct{}{}}, "a struct {} cannot be sent as Unknown"},
	} {
		_, err := (&Payload{Metrics: []Metric{c.m}}).Marshal()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c.m, err, c.want)
		}
	}
	// A property set that holds itself is refused, not followed forever.
	ps := &PropertySet{Keys: []string{"self"}}
	ps.Values = []PropertyValue{{Type: PropertySetType, Value: ps}}
	if _, err := (&Payload{Metrics: []Metric{{Name: "a", Properties: ps}}}).Marshal(); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("a cyclic property set: got %v", err)
	}
}

// Negative Int8, Int16 and Int32 values arrive as 32-bit two's complement from Tahu's codecs,
// as 64-bit from a proto int32 encoder and as 8 or 16-bit from others; all decode, and a
// value that is none of them is refused.
func TestUnmarshalSignedIntegerEncodings(t *testing.T) {
	metric := func(dt DataType, intValue uint64) []byte {
		m := []byte{0x0a, 1, 'm', 0x20, byte(dt), 0x50}
		for intValue >= 0x80 {
			m = append(m, byte(intValue)|0x80)
			intValue >>= 7
		}
		m = append(m, byte(intValue))
		return append([]byte{0x12, byte(len(m))}, m...)
	}
	for _, c := range []struct {
		dt   DataType
		w    uint64
		want int64
		err  bool
	}{
		{Int8, 233, -23, false}, {Int8, 0xFFFFFFE9, -23, false}, {Int8, 0xFFFFFFFFFFFFFFE9, -23, false},
		{Int8, 127, 127, false}, {Int8, 0x1E9, 0, true}, {Int8, 0xFFFFFF7F, 0, true},
		{Int16, 0xFFFF8000, -32768, false}, {Int16, 0x8000, -32768, false}, {Int16, 0x18000, 0, true},
		{Int32, 0xFFFFFFFF, -1, false}, {Int32, 0x7FFFFFFF, math.MaxInt32, false},
	} {
		p, err := Unmarshal(metric(c.dt, c.w))
		if c.err {
			if err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("%s %#x: got %v, want out of range", c.dt, c.w, err)
			}
			continue
		}
		if err != nil || p.Metrics[0].Value != c.want {
			t.Errorf("%s %#x: got %+v, %v; want %d", c.dt, c.w, p, err, c.want)
		}
	}
	// Tahu's JavaScript codec sends UInt32 in long_value.
	p, err := Unmarshal([]byte{0x12, 8, 0x0a, 1, 'm', 0x20, byte(UInt32), 0x58, 0x80, 0x01})
	if err != nil || p.Metrics[0].Value != uint64(128) {
		t.Errorf("UInt32 in long_value: got %+v, %v", p, err)
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	valid, err := allTypes().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// Every cut of a valid payload decodes or fails; a cut inside the first metric fails.
	for i := range valid {
		if _, err := Unmarshal(valid[:i]); err == nil && i > 8 && i < 20 {
			t.Errorf("a cut at %d bytes decoded", i)
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"length past the end", []byte{0x12, 0x05, 0x0a, 0x01}, "payload: field 2: unexpected EOF"},
		{"truncated varint", []byte{0x08, 0x80}, "unexpected EOF"},
		{"String in int_value", []byte{0x12, 7, 0x0a, 1, 'm', 0x20, 12, 0x50, 1}, `metric 0 ("m"): String value is in int_value, not string_value`},
		{"Boolean in string_value", []byte{0x12, 8, 0x0a, 1, 'm', 0x20, 11, 0x7a, 1, 'x'}, "Boolean value is in string_value"},
		{"bad nested", []byte{0x12, 4, 0x4a, 2, 0x12, 5}, "metric 0: properties: field 2: unexpected EOF"},
	} {
		_, err := Unmarshal(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestUnmarshalSkipsUnknownFields(t *testing.T) {
	b, err := (&Payload{HasSeq: true, Seq: 4, Metrics: []Metric{{Name: "m", Datatype: Int64, Value: int64(-2)}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// An extension field 6 (varint), 7 (fixed64), 8 (bytes), 9 (fixed32) and a group 10 on
	// the payload, and a field 40 in the metric, as a newer sender might add.
	ext := []byte{0x30, 0x01, 0x39, 1, 2, 3, 4, 5, 6, 7, 8, 0x42, 2, 'h', 'i', 0x4d, 1, 2, 3, 4, 0x53, 0x08, 0x01, 0x54}
	p, err := Unmarshal(append(append([]byte{}, ext...), b...))
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasSeq || p.Seq != 4 || len(p.Metrics) != 1 || p.Metrics[0].Value != int64(-2) {
		t.Fatalf("got %+v", p)
	}
	// A metric with an unknown field 40 and the extension value (19) among its own.
	m := []byte{0x12, 14, 0x0a, 1, 'm', 0xc0, 0x02, 0x07, 0x20, 12, 0x9a, 0x01, 1, 0x08, 0x7a, 1, 'x'}
	m[1] = byte(len(m) - 2)
	if p, err = Unmarshal(m); err != nil || p.Metrics[0].Value != "x" {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestUnmarshalBoundsNesting(t *testing.T) {
	// Property sets nested 40 deep: each PropertyValue holds a PropertySet in field 9.
	chain := []byte{}
	for i := 0; i < 40; i++ {
		pv := appendLen([]byte{0x08, byte(PropertySetType), 0x4a}, chain)
		chain = appendLen([]byte{0x12}, pv)
	}
	metric := appendLen([]byte{0x0a, 1, 'm', 0x4a}, chain)
	payload := appendLen([]byte{0x12}, metric)
	if _, err := Unmarshal(payload); err == nil || !strings.Contains(err.Error(), "nested deeper than 32") {
		t.Fatalf("got %v, want the nesting bound", err)
	}
}

func appendLen(b, msg []byte) []byte {
	n := uint64(len(msg))
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(append(b, byte(n)), msg...)
}

func TestResolve(t *testing.T) {
	// A DCMD without datatype, as a host may send it: the value as carried.
	b := []byte{0x12, 5, 0x10, 7, 0x50, 0xE9, 0x01}
	p, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Metrics[0]
	if m.Datatype != Unknown || m.Value != uint64(233) {
		t.Fatalf("got %+v", m)
	}
	if err := m.Resolve(Int8); err != nil || m.Value != int64(-23) || m.Datatype != Int8 {
		t.Fatalf("Resolve(Int8): %+v, %v", m, err)
	}
	if err := m.Resolve(String); err == nil || !strings.Contains(err.Error(), "alias 7 is Int8, not String") {
		t.Fatalf("Resolve(String) of an Int8: %v", err)
	}
	s := Metric{Name: "Command/PrintJob", Value: "{}"}
	if err := s.Resolve(Int64); err == nil || !strings.Contains(err.Error(), `"Command/PrintJob": Int64 value is in string_value`) {
		t.Fatalf("Resolve(Int64) of a string: %v", err)
	}
	if err := s.Resolve(String); err != nil || s.Value != "{}" {
		t.Fatalf("Resolve(String): %+v %v", s, err)
	}
}

func TestDataTypeNames(t *testing.T) {
	for dt := Unknown; dt <= DateTimeArray; dt++ {
		got, ok := ParseDataType(dt.String())
		if !ok || got != dt {
			t.Errorf("%d: %q parses as %d", dt, dt.String(), got)
		}
	}
	if DataSetType.String() != "DataSet" || Int64 != 4 || UInt64 != 8 || Double != 10 || Boolean != 11 || String != 12 || DateTime != 13 || DataSetType != 16 || TemplateType != 19 || DateTimeArray != 34 {
		t.Error("datatype numbers differ from the specification's")
	}
	if DataType(99).String() != "DataType(99)" || DataType(99).Known() {
		t.Error(DataType(99).String())
	}
}

func TestJSON(t *testing.T) {
	p := &Payload{Timestamp: 1, HasSeq: true, Seq: 0, Metrics: []Metric{
		{Name: "b", Datatype: Boolean, Value: false},
		{HasAlias: true, Alias: 0, Datatype: UInt64, Value: uint64(math.MaxUint64)},
		{Name: "f", Datatype: Float, Value: float32(math.NaN()), Properties: &PropertySet{Keys: []string{"Quality"}, Values: []PropertyValue{{Type: Int32, Value: int64(500)}}}},
		{Name: "d", Datatype: Double, Value: 0.1},
		{Name: "n", Datatype: String, IsNull: true},
		{Name: "ds", Datatype: DataSetType, Value: &DataSet{NumOfColumns: 2, Columns: []string{"id", "n"}, Types: []DataType{String, Int64}, Rows: [][]any{{"a", int64(-1)}}}},
		{Name: "raw", Value: []byte("hi")},
	}}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp":1,"seq":0,"metrics":[{"name":"b","datatype":"Boolean","value":false},` +
		`{"alias":0,"datatype":"UInt64","value":18446744073709551615},` +
		`{"name":"f","datatype":"Float","properties":[{"key":"Quality","type":"Int32","value":500}],"value":"NaN"},` +
		`{"name":"d","datatype":"Double","value":0.1},{"name":"n","datatype":"String","is_null":true},` +
		`{"name":"ds","datatype":"DataSet","value":{"num_of_columns":2,"columns":["id","n"],"types":["String","Int64"],"rows":[["a",-1]]}},` +
		`{"name":"raw","value":"aGk="}]}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
