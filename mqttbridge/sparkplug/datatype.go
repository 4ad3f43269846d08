package sparkplug

import "strconv"

// DataType is a Sparkplug B datatype: the number a metric, a property value, a DataSet
// column or a template parameter carries in its datatype or type field.
type DataType uint32

// The datatypes of the specification's payload chapter, with their numbers. The four whose
// names are also types of this package (DataSet, Template, PropertySet, PropertySetList)
// carry the suffix Type.
const (
	Unknown             DataType = 0
	Int8                DataType = 1
	Int16               DataType = 2
	Int32               DataType = 3
	Int64               DataType = 4
	UInt8               DataType = 5
	UInt16              DataType = 6
	UInt32              DataType = 7
	UInt64              DataType = 8
	Float               DataType = 9
	Double              DataType = 10
	Boolean             DataType = 11
	String              DataType = 12
	DateTime            DataType = 13
	Text                DataType = 14
	UUID                DataType = 15
	DataSetType         DataType = 16
	Bytes               DataType = 17
	File                DataType = 18
	TemplateType        DataType = 19
	PropertySetType     DataType = 20
	PropertySetListType DataType = 21
	Int8Array           DataType = 22
	Int16Array          DataType = 23
	Int32Array          DataType = 24
	Int64Array          DataType = 25
	UInt8Array          DataType = 26
	UInt16Array         DataType = 27
	UInt32Array         DataType = 28
	UInt64Array         DataType = 29
	FloatArray          DataType = 30
	DoubleArray         DataType = 31
	BooleanArray        DataType = 32
	StringArray         DataType = 33
	DateTimeArray       DataType = 34
)

var dataTypeNames = [...]string{
	"Unknown", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
	"Float", "Double", "Boolean", "String", "DateTime", "Text", "UUID", "DataSet", "Bytes",
	"File", "Template", "PropertySet", "PropertySetList", "Int8Array", "Int16Array",
	"Int32Array", "Int64Array", "UInt8Array", "UInt16Array", "UInt32Array", "UInt64Array",
	"FloatArray", "DoubleArray", "BooleanArray", "StringArray", "DateTimeArray",
}

// String returns the datatype's name as the specification spells it ("Int64", "DataSet"),
// or "DataType(N)" for a number it does not define.
func (t DataType) String() string {
	if int(t) < len(dataTypeNames) {
		return dataTypeNames[t]
	}
	return "DataType(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// ParseDataType returns the datatype the specification names name ("Int64", "DataSet").
func ParseDataType(name string) (DataType, bool) {
	for i, n := range dataTypeNames {
		if n == name {
			return DataType(i), true
		}
	}
	return Unknown, false
}

// Known reports whether the specification defines t.
func (t DataType) Known() bool { return int(t) < len(dataTypeNames) }
