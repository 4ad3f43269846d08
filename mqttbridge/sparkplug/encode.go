package sparkplug

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// maxDepth bounds how deep property sets, property set lists and templates nest, in Marshal
// and in Unmarshal, so that neither a cycle nor a crafted payload exhausts the stack.
const maxDepth = 32

var errDepth = fmt.Errorf("nested deeper than %d levels", maxDepth)

// Marshal encodes the payload in the Sparkplug B protobuf encoding. It fails, naming the
// metric, when a value is not of its datatype's Go type or out of its range. Each nested
// message (a metric, its properties, a DataSet's rows) is written in place in the one buffer
// it returns, not built apart and copied: a payload of metrics with properties costs a few
// allocations, however many metrics it has.
func (p *Payload) Marshal() ([]byte, error) {
	if p == nil {
		return nil, errors.New("sparkplug: nil payload")
	}
	// Room for a DDATA's few metrics at once; a birth grows it a few times.
	b := make([]byte, 0, 64+64*len(p.Metrics))
	if p.Timestamp != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, p.Timestamp)
	}
	for i := range p.Metrics {
		var err error
		mark := openField(&b, 2)
		if b, err = appendMetric(b, &p.Metrics[i], 0); err != nil {
			return nil, fmt.Errorf("sparkplug: metric %d (%s): %w", i, p.Metrics[i].label(), err)
		}
		b = closeField(b, mark)
	}
	if p.HasSeq {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, p.Seq)
	}
	if p.UUID != "" {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendString(b, p.UUID)
	}
	if p.Body != nil {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, p.Body)
	}
	return b, nil
}

// openField starts a length-delimited field n at the end of *b, its length one byte for now,
// and returns where its contents start, for closeField.
func openField(b *[]byte, n protowire.Number) int {
	*b = protowire.AppendTag(*b, n, protowire.BytesType)
	*b = append(*b, 0)
	return len(*b)
}

// closeField ends the field whose contents start at mark: it writes their length, moving
// them up when it takes more than the one byte openField kept.
func closeField(b []byte, mark int) []byte {
	l := uint64(len(b) - mark)
	if l < 0x80 {
		b[mark-1] = byte(l)
		return b
	}
	var v [binary.MaxVarintLen64]byte
	lv := protowire.AppendVarint(v[:0], l)
	extra := len(lv) - 1
	b = append(b, lv[:extra]...) // room; overwritten below
	copy(b[mark+extra:], b[mark:len(b)-extra])
	copy(b[mark-1:], lv)
	return b
}

func appendVarintField(b []byte, n protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendStringField(b []byte, n protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBool(b []byte, n protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return appendVarintField(b, n, 1)
}

func appendMetric(b []byte, m *Metric, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	if m.Name != "" {
		b = appendStringField(b, 1, m.Name)
	}
	if m.HasAlias {
		b = appendVarintField(b, 2, m.Alias)
	}
	if m.Timestamp != 0 {
		b = appendVarintField(b, 3, m.Timestamp)
	}
	if m.Datatype != Unknown {
		b = appendVarintField(b, 4, uint64(m.Datatype))
	}
	b = appendBool(b, 5, m.IsHistorical)
	b = appendBool(b, 6, m.IsTransient)
	b = appendBool(b, 7, m.IsNull)
	if md := m.MetaData; md != nil {
		mark := openField(&b, 8)
		e := appendBool(b, 1, md.IsMultiPart)
		for _, f := range []struct {
			n protowire.Number
			s string
		}{{2, md.ContentType}, {5, md.FileName}, {6, md.FileType}, {7, md.MD5}, {8, md.Description}} {
			if f.s != "" {
				e = appendStringField(e, f.n, f.s)
			}
		}
		if md.Size != 0 {
			e = appendVarintField(e, 3, md.Size)
		}
		if md.Seq != 0 {
			e = appendVarintField(e, 4, md.Seq)
		}
		b = closeField(e, mark)
	}
	if m.Properties != nil {
		mark := openField(&b, 9)
		var err error
		if b, err = appendPropertySet(b, m.Properties, depth+1); err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
		b = closeField(b, mark)
	}
	if m.IsNull || m.Value == nil {
		return b, nil
	}
	return appendValue(b, &metricFields, m.Datatype, m.Value, depth)
}

// appendValue appends v, of datatype t, as the member of the value oneof tbl numbers.
func appendValue(b []byte, tbl *fieldTable, t DataType, v any, depth int) ([]byte, error) {
	k := kindFor(t)
	if k == kindNone {
		k = kindOfGo(v)
		if k == kindNone {
			return nil, fmt.Errorf("a %T cannot be sent as %s", v, t)
		}
	}
	n := tbl[k]
	if n == 0 {
		return nil, fmt.Errorf("%s values cannot be sent here", t)
	}
	wrong := func() ([]byte, error) { return nil, fmt.Errorf("%s value is a %T", t, v) }
	switch k {
	case kindInt, kindLong:
		var w uint64
		if bits, _ := intWidth(t); bits > 0 {
			var err error
			if w, err = integerBits(t, v); err != nil {
				return nil, err
			}
		} else {
			i, u, unsigned, ok := goInteger(v)
			if !ok {
				return wrong()
			}
			if w = u; !unsigned {
				w = uint64(i)
			}
		}
		if k == kindInt {
			w = uint64(uint32(w))
		}
		return appendVarintField(b, n, w), nil
	case kindFloat:
		var f float32
		switch x := v.(type) {
		case float32:
			f = x
		case float64:
			if f = float32(x); float64(f) != x && !math.IsNaN(x) {
				return nil, fmt.Errorf("%s value %v does not fit a float32", t, x)
			}
		default:
			return wrong()
		}
		b = protowire.AppendTag(b, n, protowire.Fixed32Type)
		return protowire.AppendFixed32(b, math.Float32bits(f)), nil
	case kindDouble:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			return wrong()
		}
		b = protowire.AppendTag(b, n, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(f)), nil
	case kindBool:
		x, ok := v.(bool)
		if !ok {
			return wrong()
		}
		return appendVarintField(b, n, protowire.EncodeBool(x)), nil
	case kindString:
		x, ok := v.(string)
		if !ok {
			return wrong()
		}
		return appendStringField(b, n, x), nil
	case kindBytes:
		x, ok := v.([]byte)
		if !ok {
			return wrong()
		}
		b = protowire.AppendTag(b, n, protowire.BytesType)
		return protowire.AppendBytes(b, x), nil
	}
	// A nested message, written in place (the Go type is checked first, so that nothing is
	// written for a value of the wrong one).
	switch k {
	case kindDataSet:
		switch v.(type) {
		case *DataSet, DataSet:
		default:
			return wrong()
		}
	case kindTemplate:
		switch v.(type) {
		case *Template, Template:
		default:
			return wrong()
		}
	case kindPropertySet:
		switch v.(type) {
		case *PropertySet, PropertySet:
		default:
			return wrong()
		}
	case kindPropertySetList:
		if _, ok := v.([]*PropertySet); !ok {
			return wrong()
		}
		if depth+1 > maxDepth {
			return nil, errDepth
		}
	}
	mark := openField(&b, n)
	var err error
	switch x := v.(type) {
	case *DataSet:
		b, err = appendDataSet(b, x)
	case DataSet:
		b, err = appendDataSet(b, &x)
	case *Template:
		b, err = appendTemplate(b, x, depth+1)
	case Template:
		b, err = appendTemplate(b, &x, depth+1)
	case *PropertySet:
		b, err = appendPropertySet(b, x, depth+1)
	case PropertySet:
		b, err = appendPropertySet(b, &x, depth+1)
	case []*PropertySet:
		for i, s := range x {
			sm := openField(&b, 1)
			if b, err = appendPropertySet(b, s, depth+2); err != nil {
				return nil, fmt.Errorf("property set %d: %w", i, err)
			}
			b = closeField(b, sm)
		}
	}
	if err != nil {
		return nil, err
	}
	return closeField(b, mark), nil
}

func appendPropertySet(b []byte, s *PropertySet, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	if s == nil {
		return b, nil
	}
	for _, k := range s.Keys {
		b = appendStringField(b, 1, k)
	}
	for i := range s.Values {
		pv := &s.Values[i]
		mark := openField(&b, 2)
		if pv.Type != Unknown {
			b = appendVarintField(b, 1, uint64(pv.Type))
		}
		b = appendBool(b, 2, pv.IsNull)
		if !pv.IsNull && pv.Value != nil {
			var err error
			if b, err = appendValue(b, &propertyFields, pv.Type, pv.Value, depth); err != nil {
				return nil, fmt.Errorf("property %s: %w", propertyLabel(s, i), err)
			}
		}
		b = closeField(b, mark)
	}
	return b, nil
}

func propertyLabel(s *PropertySet, i int) string {
	if i < len(s.Keys) {
		return fmt.Sprintf("%q", s.Keys[i])
	}
	return fmt.Sprintf("%d", i)
}

func appendDataSet(b []byte, d *DataSet) ([]byte, error) {
	if d == nil {
		return b, nil
	}
	if d.NumOfColumns != 0 {
		b = appendVarintField(b, 1, d.NumOfColumns)
	}
	for _, c := range d.Columns {
		b = appendStringField(b, 2, c)
	}
	for _, t := range d.Types {
		b = appendVarintField(b, 3, uint64(t))
	}
	for r, row := range d.Rows {
		rm := openField(&b, 4)
		for c, v := range row {
			t := Unknown
			if c < len(d.Types) {
				t = d.Types[c]
			}
			em := openField(&b, 1)
			if v != nil {
				var err error
				if b, err = appendValue(b, &dataSetValueFields, t, v, maxDepth); err != nil {
					return nil, fmt.Errorf("row %d column %d: %w", r, c, err)
				}
			}
			b = closeField(b, em)
		}
		b = closeField(b, rm)
	}
	return b, nil
}

func appendTemplate(b []byte, t *Template, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	if t == nil {
		return b, nil
	}
	if t.Version != "" {
		b = appendStringField(b, 1, t.Version)
	}
	for i := range t.Metrics {
		mark := openField(&b, 2)
		var err error
		if b, err = appendMetric(b, &t.Metrics[i], depth+1); err != nil {
			return nil, fmt.Errorf("template metric %d (%s): %w", i, t.Metrics[i].label(), err)
		}
		b = closeField(b, mark)
	}
	for i := range t.Parameters {
		p := &t.Parameters[i]
		mark := openField(&b, 3)
		if p.Name != "" {
			b = appendStringField(b, 1, p.Name)
		}
		if p.Type != Unknown {
			b = appendVarintField(b, 2, uint64(p.Type))
		}
		if p.Value != nil {
			var err error
			if b, err = appendValue(b, &parameterFields, p.Type, p.Value, depth); err != nil {
				return nil, fmt.Errorf("template parameter %q: %w", p.Name, err)
			}
		}
		b = closeField(b, mark)
	}
	if t.TemplateRef != "" {
		b = appendStringField(b, 4, t.TemplateRef)
	}
	b = appendBool(b, 5, t.IsDefinition)
	return b, nil
}
