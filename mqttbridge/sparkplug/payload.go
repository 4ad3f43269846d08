package sparkplug

// Payload is a Sparkplug B payload: the body of every NBIRTH, NDEATH, DBIRTH, DDEATH, NDATA,
// DDATA, NCMD and DCMD message.
type Payload struct {
	// Timestamp is the time the message was sent, in milliseconds since the epoch; 0 is not
	// sent.
	Timestamp uint64
	// HasSeq says whether the payload carries Seq; an NDEATH has none.
	HasSeq bool
	Seq    uint64
	// Metrics are sent in order.
	Metrics []Metric
	// UUID and Body are sent only when set (Body when non-nil).
	UUID string
	Body []byte
}

// Metric is one metric of a payload.
type Metric struct {
	// Name is sent when non-empty: in a birth, and in a data or command message that does
	// not use the alias.
	Name string
	// HasAlias says whether Alias is sent.
	HasAlias bool
	Alias    uint64
	// Timestamp is the time of the value, in milliseconds since the epoch; 0 is not sent.
	Timestamp uint64
	// Datatype says how Value is carried. Unknown is not sent (hosts may leave it out of
	// data and command messages): Unmarshal then gives Value as carried on the wire, which
	// Resolve converts once the caller knows the datatype from the birth.
	Datatype     DataType
	IsHistorical bool
	IsTransient  bool
	// IsNull says the metric has no value; Value is then nil.
	IsNull     bool
	MetaData   *MetaData
	Properties *PropertySet
	// Value holds, for each datatype, after Unmarshal: int64 (Int8, Int16, Int32, Int64),
	// uint64 (UInt8, UInt16, UInt32, UInt64, DateTime), float32 (Float), float64 (Double),
	// bool (Boolean), string (String, Text, UUID), []byte (Bytes, File and the array types,
	// packed as the specification says), *DataSet, *Template. Marshal also takes any Go
	// integer for the integer datatypes, checked against the datatype's range, and a
	// DataSet or Template value. A nil Value with IsNull false sends no value.
	Value any
}

// MetaData is a metric's metadata (of Bytes and File metrics mostly); empty fields are not
// sent.
type MetaData struct {
	IsMultiPart bool
	ContentType string
	Size        uint64
	Seq         uint64
	FileName    string
	FileType    string
	MD5         string
	Description string
}

// PropertySet is a metric's properties (such as "Quality"): Keys[i] names Values[i].
type PropertySet struct {
	Keys   []string
	Values []PropertyValue
}

// Get returns the value of the property named key, and whether there is one.
func (s *PropertySet) Get(key string) (PropertyValue, bool) {
	if s == nil {
		return PropertyValue{}, false
	}
	for i, k := range s.Keys {
		if k == key && i < len(s.Values) {
			return s.Values[i], true
		}
	}
	return PropertyValue{}, false
}

// PropertyValue is one property's value. Value holds what a Metric's Value holds for the
// datatype, and *PropertySet (PropertySetType) or []*PropertySet (PropertySetListType).
type PropertyValue struct {
	Type   DataType
	IsNull bool
	Value  any
}

// DataSet is a table: Columns[i] names column i and Types[i] is its datatype; each row holds
// one value per column, as a Metric's Value for that datatype, or nil for an element with no
// value. Marshal sends the shape it is given; keeping NumOfColumns, Columns, Types and the
// rows' lengths equal is the caller's part.
type DataSet struct {
	NumOfColumns uint64
	Columns      []string
	Types        []DataType
	Rows         [][]any
}

// Template is a template definition or instance: a metric holding metrics.
type Template struct {
	Version      string
	Metrics      []Metric
	Parameters   []Parameter
	TemplateRef  string
	IsDefinition bool
}

// Parameter is one parameter of a template; Value is as a DataSet element's.
type Parameter struct {
	Name  string
	Type  DataType
	Value any
}
