package sparkplug

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file holds the one rule of how a value of each datatype is carried: which field of
// the oneof it goes in and which Go type stands for it.

// wireKind is a member of the value oneof that Metric, PropertyValue, DataSet.DataSetValue
// and Template.Parameter share, under different field numbers.
type wireKind uint8

const (
	kindNone wireKind = iota
	kindInt           // uint32 int_value
	kindLong          // uint64 long_value
	kindFloat
	kindDouble
	kindBool
	kindString
	kindBytes
	kindDataSet
	kindTemplate
	kindPropertySet
	kindPropertySetList
	kindCount
)

var kindNames = [kindCount]string{"no value", "int_value", "long_value", "float_value",
	"double_value", "boolean_value", "string_value", "bytes_value", "dataset_value",
	"template_value", "propertyset_value", "propertysets_value"}

// fieldTable gives each kind's field number in one message; 0 where it has none.
type fieldTable [kindCount]protowire.Number

var (
	metricFields = fieldTable{kindInt: 10, kindLong: 11, kindFloat: 12, kindDouble: 13,
		kindBool: 14, kindString: 15, kindBytes: 16, kindDataSet: 17, kindTemplate: 18}
	propertyFields = fieldTable{kindInt: 3, kindLong: 4, kindFloat: 5, kindDouble: 6,
		kindBool: 7, kindString: 8, kindPropertySet: 9, kindPropertySetList: 10}
	dataSetValueFields = fieldTable{kindInt: 1, kindLong: 2, kindFloat: 3, kindDouble: 4,
		kindBool: 5, kindString: 6}
	parameterFields = fieldTable{kindInt: 3, kindLong: 4, kindFloat: 5, kindDouble: 6,
		kindBool: 7, kindString: 8}
)

func (t *fieldTable) kindOf(n protowire.Number) wireKind {
	for k, f := range t {
		if f != 0 && f == n {
			return wireKind(k)
		}
	}
	return kindNone
}

// kindFor is the member the specification's payload chapter puts a datatype's value in:
// the 8, 16 and 32-bit integers in the uint32, the 64-bit ones and DateTime in the uint64
// (Tahu's JavaScript codec puts UInt32 there too; Unmarshal takes either for any integer).
func kindFor(t DataType) wireKind {
	switch t {
	case Int8, Int16, Int32, UInt8, UInt16, UInt32:
		return kindInt
	case Int64, UInt64, DateTime:
		return kindLong
	case Float:
		return kindFloat
	case Double:
		return kindDouble
	case Boolean:
		return kindBool
	case String, Text, UUID:
		return kindString
	case Bytes, File, Int8Array, Int16Array, Int32Array, Int64Array, UInt8Array, UInt16Array,
		UInt32Array, UInt64Array, FloatArray, DoubleArray, BooleanArray, StringArray,
		DateTimeArray:
		return kindBytes
	case DataSetType:
		return kindDataSet
	case TemplateType:
		return kindTemplate
	case PropertySetType:
		return kindPropertySet
	case PropertySetListType:
		return kindPropertySetList
	}
	return kindNone
}

// kindOfGo is the member a value of a datatype this package does not know goes in, from its
// Go type: what Unmarshal gives for such a value.
func kindOfGo(v any) wireKind {
	switch v.(type) {
	case uint64, int64:
		return kindLong
	case float32:
		return kindFloat
	case float64:
		return kindDouble
	case bool:
		return kindBool
	case string:
		return kindString
	case []byte:
		return kindBytes
	case *DataSet, DataSet:
		return kindDataSet
	case *Template, Template:
		return kindTemplate
	case *PropertySet, PropertySet:
		return kindPropertySet
	case []*PropertySet:
		return kindPropertySetList
	}
	return kindNone
}

// intWidth is an integer datatype's width in bits and whether it is signed; 0 for the others.
func intWidth(t DataType) (bits uint, signed bool) {
	switch t {
	case Int8:
		return 8, true
	case Int16:
		return 16, true
	case Int32:
		return 32, true
	case Int64:
		return 64, true
	case UInt8:
		return 8, false
	case UInt16:
		return 16, false
	case UInt32:
		return 32, false
	case UInt64, DateTime:
		return 64, false
	}
	return 0, false
}

// goInteger splits any Go integer into its value as int64 or, for unsigned kinds, uint64.
func goInteger(v any) (i int64, u uint64, unsigned, ok bool) {
	switch x := v.(type) {
	case int:
		return int64(x), 0, false, true
	case int8:
		return int64(x), 0, false, true
	case int16:
		return int64(x), 0, false, true
	case int32:
		return int64(x), 0, false, true
	case int64:
		return x, 0, false, true
	case uint:
		return 0, uint64(x), true, true
	case uint8:
		return 0, uint64(x), true, true
	case uint16:
		return 0, uint64(x), true, true
	case uint32:
		return 0, uint64(x), true, true
	case uint64:
		return 0, x, true, true
	}
	return 0, 0, false, false
}

// integerBits checks v against t's range and returns its two's complement bits: a negative
// Int8, Int16 or Int32 is sent as its 32-bit two's complement, as Tahu's codecs do.
func integerBits(t DataType, v any) (uint64, error) {
	bits, signed := intWidth(t)
	i, u, unsigned, ok := goInteger(v)
	if !ok {
		return 0, fmt.Errorf("%s value is a %T, not an integer", t, v)
	}
	if signed {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if bits < 64 {
			lo, hi = -1<<(bits-1), 1<<(bits-1)-1
		}
		if unsigned {
			if u > uint64(hi) {
				return 0, fmt.Errorf("%s value %d is out of range", t, u)
			}
			i = int64(u)
		}
		if i < lo || i > hi {
			return 0, fmt.Errorf("%s value %d is out of range", t, i)
		}
		if bits < 64 {
			return uint64(uint32(int32(i))), nil
		}
		return uint64(i), nil
	}
	if !unsigned {
		if i < 0 {
			return 0, fmt.Errorf("%s value %d is out of range", t, i)
		}
		u = uint64(i)
	}
	if bits < 64 && u > 1<<bits-1 {
		return 0, fmt.Errorf("%s value %d is out of range", t, u)
	}
	return u, nil
}

// integerFromBits is integerBits' inverse: it takes the bits as any encoder sends them (a
// negative Int8 as 8, 32 or 64-bit two's complement) and refuses the others.
func integerFromBits(t DataType, w uint64) (any, error) {
	bits, signed := intWidth(t)
	if bits == 64 {
		if signed {
			return int64(w), nil
		}
		return w, nil
	}
	mask := uint64(1)<<bits - 1
	if !signed {
		if w > mask {
			return nil, fmt.Errorf("%s value %d is out of range", t, w)
		}
		return w, nil
	}
	lo := w & mask
	v := int64(lo<<(64-bits)) >> (64 - bits)
	if w != lo && w != uint64(uint32(v)) && w != uint64(v) {
		return nil, fmt.Errorf("%s value %d is out of range", t, w)
	}
	return v, nil
}

// goValue converts a value as carried on the wire (uint64 for either integer member,
// float32, float64, bool, string, []byte, *DataSet, *Template, *PropertySet, []*PropertySet)
// to the Go value of datatype t; a datatype this package does not know keeps it as it is.
func goValue(t DataType, k wireKind, w any) (any, error) {
	want := kindFor(t)
	if want == kindNone {
		return w, nil
	}
	if bits, _ := intWidth(t); bits > 0 {
		if k != kindInt && k != kindLong {
			return nil, fmt.Errorf("%s value is in %s", t, kindNames[k])
		}
		switch x := w.(type) {
		case uint64:
			return integerFromBits(t, x)
		case int64:
			return integerFromBits(t, uint64(x))
		}
		return nil, fmt.Errorf("%s value is a %T", t, w)
	}
	if k != want {
		return nil, fmt.Errorf("%s value is in %s, not %s", t, kindNames[k], kindNames[want])
	}
	return w, nil
}

// Resolve gives a metric decoded without a datatype (a host may leave it out of a command)
// the datatype t its birth declared, converting Value as Unmarshal would have. It fails when
// the metric has another datatype or its value cannot be one of t.
func (m *Metric) Resolve(t DataType) error {
	if m.Datatype == t {
		return nil
	}
	if m.Datatype != Unknown {
		return fmt.Errorf("sparkplug: metric %s is %s, not %s", m.label(), m.Datatype, t)
	}
	if !m.IsNull && m.Value != nil {
		v, err := goValue(t, kindOfGo(m.Value), m.Value)
		if err != nil {
			return fmt.Errorf("sparkplug: metric %s: %w", m.label(), err)
		}
		m.Value = v
	}
	m.Datatype = t
	return nil
}

func (m *Metric) label() string {
	if m.Name != "" {
		return fmt.Sprintf("%q", m.Name)
	}
	if m.HasAlias {
		return fmt.Sprintf("alias %d", m.Alias)
	}
	return "without name or alias"
}
