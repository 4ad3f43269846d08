package sparkplug

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Unmarshal decodes a Sparkplug B payload. Fields it does not know, and extension values, are
// skipped; every length is checked against the bytes that remain and nesting is bounded, so a
// malformed payload gives an error, never a panic. What it allocates is in proportion to
// len(b): at most 48 bytes per input byte for the payloads built to make it allocate the most
// (a megabyte of empty metrics, metadata, DataSet rows, ...; TestUnmarshalAllocation), so a
// caller bounds it by bounding the payload. A value not carried as its datatype says (a String
// in int_value, an Int8 beyond -128..127) is an error naming the metric. The payload shares no
// memory with b.
func Unmarshal(b []byte) (*Payload, error) {
	p := &Payload{}
	if n := countField(b, 2); n > 0 {
		p.Metrics = make([]Metric, 0, n)
	}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, fmt.Errorf("sparkplug: payload: %w", err)
		}
		b = rest
		switch {
		case f.is(1, protowire.VarintType):
			p.Timestamp = f.u
		case f.is(2, protowire.BytesType):
			m, err := decodeMetric(f.b, 1)
			if err != nil {
				return nil, fmt.Errorf("sparkplug: metric %d%s: %w", len(p.Metrics), nameOf(f.b), err)
			}
			p.Metrics = append(p.Metrics, m)
		case f.is(3, protowire.VarintType):
			p.HasSeq, p.Seq = true, f.u
		case f.is(4, protowire.BytesType):
			p.UUID = string(f.b)
		case f.is(5, protowire.BytesType):
			p.Body = bytes.Clone(f.b)
		}
	}
	return p, nil
}

// field is one decoded field: u holds a varint's or a fixed field's bits, b a length-delimited
// field's bytes (a slice of the input).
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	b   []byte
}

func (f *field) is(n protowire.Number, t protowire.Type) bool { return f.num == n && f.typ == t }

func nextField(b []byte) (field, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, protowire.ParseError(n)
	}
	b = b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.u, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		f.u = uint64(v)
	case protowire.Fixed64Type:
		f.u, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(b)
	default:
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return field{}, nil, fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
	}
	return f, b[n:], nil
}

// countField counts the length-delimited fields numbered n in b, so that a repeated field's
// slice is allocated once at its size rather than grown by doubling; it stops at the first
// malformed field, which the decoder then reports.
func countField(b []byte, n protowire.Number) int {
	c := 0
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			break
		}
		if f.is(n, protowire.BytesType) {
			c++
		}
		b = rest
	}
	return c
}

// nameOf returns ` ("name")` for an encoded metric whose name can be read, for errors.
func nameOf(b []byte) string {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return ""
		}
		if f.is(1, protowire.BytesType) {
			return fmt.Sprintf(" (%q)", f.b)
		}
		b = rest
	}
	return ""
}

// wireValue is the last member of a value oneof seen in a message, as carried: uint64 for
// int_value and long_value, float32, float64, bool, string, []byte, *DataSet, *Template,
// *PropertySet, []*PropertySet.
type wireValue struct {
	kind wireKind
	v    any
}

// take decodes f into w when f is a member of tbl's oneof, and reports whether it was.
func (w *wireValue) take(tbl *fieldTable, f *field, depth int) (bool, error) {
	k := tbl.kindOf(f.num)
	if k == kindNone {
		return false, nil
	}
	want := protowire.BytesType
	switch k {
	case kindInt, kindLong, kindBool:
		want = protowire.VarintType
	case kindFloat:
		want = protowire.Fixed32Type
	case kindDouble:
		want = protowire.Fixed64Type
	}
	if f.typ != want {
		return false, nil
	}
	var v any
	var err error
	switch k {
	case kindInt:
		v = uint64(uint32(f.u))
	case kindLong:
		v = f.u
	case kindFloat:
		v = math.Float32frombits(uint32(f.u))
	case kindDouble:
		v = math.Float64frombits(f.u)
	case kindBool:
		v = f.u != 0
	case kindString:
		v = string(f.b)
	case kindBytes:
		v = bytes.Clone(f.b)
	case kindDataSet:
		v, err = decodeDataSet(f.b, depth+1)
	case kindTemplate:
		v, err = decodeTemplate(f.b, depth+1)
	case kindPropertySet:
		v, err = decodePropertySet(f.b, depth+1)
	case kindPropertySetList:
		v, err = decodePropertySetList(f.b, depth+1)
	}
	if err != nil {
		return true, fmt.Errorf("%s: %w", kindNames[k], err)
	}
	w.kind, w.v = k, v
	return true, nil
}

// value is the Go value of datatype t, nil when no member was seen.
func (w *wireValue) value(t DataType) (any, error) {
	if w.kind == kindNone {
		return nil, nil
	}
	return goValue(t, w.kind, w.v)
}

func decodeMetric(b []byte, depth int) (Metric, error) {
	var m Metric
	if depth > maxDepth {
		return m, errDepth
	}
	var w wireValue
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return m, err
		}
		b = rest
		switch {
		case f.is(1, protowire.BytesType):
			m.Name = string(f.b)
		case f.is(2, protowire.VarintType):
			m.HasAlias, m.Alias = true, f.u
		case f.is(3, protowire.VarintType):
			m.Timestamp = f.u
		case f.is(4, protowire.VarintType):
			m.Datatype = DataType(uint32(f.u))
		case f.is(5, protowire.VarintType):
			m.IsHistorical = f.u != 0
		case f.is(6, protowire.VarintType):
			m.IsTransient = f.u != 0
		case f.is(7, protowire.VarintType):
			m.IsNull = f.u != 0
		case f.is(8, protowire.BytesType):
			if m.MetaData, err = decodeMetaData(f.b); err != nil {
				return m, fmt.Errorf("metadata: %w", err)
			}
		case f.is(9, protowire.BytesType):
			if m.Properties, err = decodePropertySet(f.b, depth+1); err != nil {
				return m, fmt.Errorf("properties: %w", err)
			}
		default:
			if _, err := w.take(&metricFields, &f, depth); err != nil {
				return m, err
			}
		}
	}
	if m.IsNull {
		return m, nil
	}
	v, err := w.value(m.Datatype)
	m.Value = v
	return m, err
}

func decodeMetaData(b []byte) (*MetaData, error) {
	md := &MetaData{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		switch {
		case f.is(1, protowire.VarintType):
			md.IsMultiPart = f.u != 0
		case f.is(2, protowire.BytesType):
			md.ContentType = string(f.b)
		case f.is(3, protowire.VarintType):
			md.Size = f.u
		case f.is(4, protowire.VarintType):
			md.Seq = f.u
		case f.is(5, protowire.BytesType):
			md.FileName = string(f.b)
		case f.is(6, protowire.BytesType):
			md.FileType = string(f.b)
		case f.is(7, protowire.BytesType):
			md.MD5 = string(f.b)
		case f.is(8, protowire.BytesType):
			md.Description = string(f.b)
		}
	}
	return md, nil
}

func decodePropertySet(b []byte, depth int) (*PropertySet, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	s := &PropertySet{}
	if n := countField(b, 1); n > 0 {
		s.Keys = make([]string, 0, n)
	}
	if n := countField(b, 2); n > 0 {
		s.Values = make([]PropertyValue, 0, n)
	}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		switch {
		case f.is(1, protowire.BytesType):
			s.Keys = append(s.Keys, string(f.b))
		case f.is(2, protowire.BytesType):
			pv, err := decodePropertyValue(f.b, depth+1)
			if err != nil {
				return nil, fmt.Errorf("property %d: %w", len(s.Values), err)
			}
			s.Values = append(s.Values, pv)
		}
	}
	return s, nil
}

func decodePropertyValue(b []byte, depth int) (PropertyValue, error) {
	var pv PropertyValue
	if depth > maxDepth {
		return pv, errDepth
	}
	var w wireValue
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return pv, err
		}
		b = rest
		switch {
		case f.is(1, protowire.VarintType):
			pv.Type = DataType(uint32(f.u))
		case f.is(2, protowire.VarintType):
			pv.IsNull = f.u != 0
		default:
			if _, err := w.take(&propertyFields, &f, depth); err != nil {
				return pv, err
			}
		}
	}
	if pv.IsNull {
		return pv, nil
	}
	v, err := w.value(pv.Type)
	pv.Value = v
	return pv, err
}

func decodePropertySetList(b []byte, depth int) ([]*PropertySet, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	list := []*PropertySet{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if f.is(1, protowire.BytesType) {
			s, err := decodePropertySet(f.b, depth+1)
			if err != nil {
				return nil, fmt.Errorf("property set %d: %w", len(list), err)
			}
			list = append(list, s)
		}
	}
	return list, nil
}

func decodeDataSet(b []byte, depth int) (*DataSet, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	d := &DataSet{}
	var rows [][]wireValue
	if n := countField(b, 4); n > 0 {
		rows = make([][]wireValue, 0, n)
	}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		switch {
		case f.is(1, protowire.VarintType):
			d.NumOfColumns = f.u
		case f.is(2, protowire.BytesType):
			d.Columns = append(d.Columns, string(f.b))
		case f.is(3, protowire.VarintType):
			d.Types = append(d.Types, DataType(uint32(f.u)))
		case f.is(3, protowire.BytesType): // packed: one byte at least per type
			d.Types = slices.Grow(d.Types, len(f.b))
			for p := f.b; len(p) > 0; {
				v, n := protowire.ConsumeVarint(p)
				if n < 0 {
					return nil, fmt.Errorf("types: %w", protowire.ParseError(n))
				}
				d.Types = append(d.Types, DataType(uint32(v)))
				p = p[n:]
			}
		case f.is(4, protowire.BytesType):
			row, err := decodeRow(f.b)
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", len(rows), err)
			}
			rows = append(rows, row)
		}
	}
	if rows != nil {
		d.Rows = make([][]any, len(rows))
	}
	for r, row := range rows {
		if row == nil {
			continue
		}
		d.Rows[r] = make([]any, len(row))
		for c, w := range row {
			t := Unknown
			if c < len(d.Types) {
				t = d.Types[c]
			}
			v, err := w.value(t)
			if err != nil {
				return nil, fmt.Errorf("row %d column %d: %w", r, c, err)
			}
			d.Rows[r][c] = v
		}
	}
	return d, nil
}

func decodeRow(b []byte) ([]wireValue, error) {
	var row []wireValue
	if n := countField(b, 1); n > 0 {
		row = make([]wireValue, 0, n)
	}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if !f.is(1, protowire.BytesType) {
			continue
		}
		var w wireValue
		for e := f.b; len(e) > 0; {
			g, rest, err := nextField(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", len(row), err)
			}
			e = rest
			if _, err := w.take(&dataSetValueFields, &g, maxDepth); err != nil {
				return nil, fmt.Errorf("element %d: %w", len(row), err)
			}
		}
		row = append(row, w)
	}
	return row, nil
}

func decodeTemplate(b []byte, depth int) (*Template, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	t := &Template{}
	if n := countField(b, 2); n > 0 {
		t.Metrics = make([]Metric, 0, n)
	}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		switch {
		case f.is(1, protowire.BytesType):
			t.Version = string(f.b)
		case f.is(2, protowire.BytesType):
			m, err := decodeMetric(f.b, depth+1)
			if err != nil {
				return nil, fmt.Errorf("template metric %d%s: %w", len(t.Metrics), nameOf(f.b), err)
			}
			t.Metrics = append(t.Metrics, m)
		case f.is(3, protowire.BytesType):
			p, err := decodeParameter(f.b)
			if err != nil {
				return nil, fmt.Errorf("template parameter %d: %w", len(t.Parameters), err)
			}
			t.Parameters = append(t.Parameters, p)
		case f.is(4, protowire.BytesType):
			t.TemplateRef = string(f.b)
		case f.is(5, protowire.VarintType):
			t.IsDefinition = f.u != 0
		}
	}
	return t, nil
}

func decodeParameter(b []byte) (Parameter, error) {
	var p Parameter
	var w wireValue
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return p, err
		}
		b = rest
		switch {
		case f.is(1, protowire.BytesType):
			p.Name = string(f.b)
		case f.is(2, protowire.VarintType):
			p.Type = DataType(uint32(f.u))
		default:
			if _, err := w.take(&parameterFields, &f, maxDepth); err != nil {
				return p, err
			}
		}
	}
	v, err := w.value(p.Type)
	p.Value = v
	return p, err
}
