package sparkplug

import (
	"encoding/json"
	"math"
	"strconv"
)

// The JSON form of a payload, for people and scripts reading one (labelctl sparkplug decode):
// snake_case members as the specification names the fields, a datatype by its name, a value as
// a JSON number, boolean or string (Bytes, File and the array types in base64; NaN and the
// infinities as the strings "NaN", "+Inf" and "-Inf"), 64-bit integers in full. Members that
// are not sent are left out. It is an output form only: nothing here reads it back.

type jsonPayload struct {
	Timestamp uint64    `json:"timestamp,omitempty"`
	Seq       *uint64   `json:"seq,omitempty"`
	UUID      string    `json:"uuid,omitempty"`
	Body      []byte    `json:"body,omitempty"`
	Metrics   []*Metric `json:"metrics"`
}

// MarshalJSON gives the payload's JSON form (see json.go).
func (p *Payload) MarshalJSON() ([]byte, error) {
	j := jsonPayload{Timestamp: p.Timestamp, UUID: p.UUID, Body: p.Body, Metrics: []*Metric{}}
	if p.HasSeq {
		j.Seq = &p.Seq
	}
	for i := range p.Metrics {
		j.Metrics = append(j.Metrics, &p.Metrics[i])
	}
	return json.Marshal(j)
}

type jsonMetric struct {
	Name         string       `json:"name,omitempty"`
	Alias        *uint64      `json:"alias,omitempty"`
	Timestamp    uint64       `json:"timestamp,omitempty"`
	Datatype     string       `json:"datatype,omitempty"`
	IsHistorical bool         `json:"is_historical,omitempty"`
	IsTransient  bool         `json:"is_transient,omitempty"`
	IsNull       bool         `json:"is_null,omitempty"`
	MetaData     *MetaData    `json:"metadata,omitempty"`
	Properties   *PropertySet `json:"properties,omitempty"`
	Value        any          `json:"value,omitempty"`
}

// MarshalJSON gives the metric's JSON form (see json.go).
func (m *Metric) MarshalJSON() ([]byte, error) {
	j := jsonMetric{Name: m.Name, Timestamp: m.Timestamp, IsHistorical: m.IsHistorical,
		IsTransient: m.IsTransient, IsNull: m.IsNull, MetaData: m.MetaData, Properties: m.Properties,
		Value: jsonValue(m.Value)} // a false, 0 or "" in an interface is not empty to omitempty
	if m.HasAlias {
		j.Alias = &m.Alias
	}
	if m.Datatype != Unknown {
		j.Datatype = m.Datatype.String()
	}
	return json.Marshal(j)
}

// jsonValue gives floats that JSON cannot hold as strings.
func jsonValue(v any) any {
	switch x := v.(type) {
	case float32:
		return jsonFloat{float64(x), 32}
	case float64:
		return jsonFloat{x, 64}
	}
	return v
}

type jsonFloat struct {
	f    float64
	bits int
}

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	switch {
	case math.IsNaN(f.f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f.f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f.f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f.f, 'g', -1, f.bits), nil
}

// MarshalJSON gives the metadata's JSON form (see json.go).
func (md *MetaData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		IsMultiPart bool   `json:"is_multi_part,omitempty"`
		ContentType string `json:"content_type,omitempty"`
		Size        uint64 `json:"size,omitempty"`
		Seq         uint64 `json:"seq,omitempty"`
		FileName    string `json:"file_name,omitempty"`
		FileType    string `json:"file_type,omitempty"`
		MD5         string `json:"md5,omitempty"`
		Description string `json:"description,omitempty"`
	}(*md))
}

type jsonProperty struct {
	Key    string `json:"key"`
	Type   string `json:"type,omitempty"`
	IsNull bool   `json:"is_null,omitempty"`
	Value  any    `json:"value,omitempty"`
}

// MarshalJSON gives the property set's JSON form: a list of {"key", "type", "value"} in
// order (see json.go).
func (s *PropertySet) MarshalJSON() ([]byte, error) {
	n := max(len(s.Keys), len(s.Values))
	list := make([]jsonProperty, n)
	for i := range list {
		if i < len(s.Keys) {
			list[i].Key = s.Keys[i]
		}
		if i < len(s.Values) {
			v := s.Values[i]
			if v.Type != Unknown {
				list[i].Type = v.Type.String()
			}
			list[i].IsNull = v.IsNull
			list[i].Value = jsonValue(v.Value)
		}
	}
	return json.Marshal(list)
}

// MarshalJSON gives the DataSet's JSON form (see json.go).
func (d *DataSet) MarshalJSON() ([]byte, error) {
	types := make([]string, len(d.Types))
	for i, t := range d.Types {
		types[i] = t.String()
	}
	rows := make([][]any, len(d.Rows))
	for r, row := range d.Rows {
		rows[r] = make([]any, len(row))
		for c, v := range row {
			rows[r][c] = jsonValue(v)
		}
	}
	return json.Marshal(struct {
		NumOfColumns uint64   `json:"num_of_columns"`
		Columns      []string `json:"columns"`
		Types        []string `json:"types"`
		Rows         [][]any  `json:"rows"`
	}{d.NumOfColumns, d.Columns, types, rows})
}

// MarshalJSON gives the template's JSON form (see json.go).
func (t *Template) MarshalJSON() ([]byte, error) {
	type param struct {
		Name  string `json:"name,omitempty"`
		Type  string `json:"type,omitempty"`
		Value any    `json:"value,omitempty"`
	}
	params := make([]param, len(t.Parameters))
	for i, p := range t.Parameters {
		params[i].Name = p.Name
		if p.Type != Unknown {
			params[i].Type = p.Type.String()
		}
		params[i].Value = jsonValue(p.Value)
	}
	metrics := make([]*Metric, len(t.Metrics))
	for i := range t.Metrics {
		metrics[i] = &t.Metrics[i]
	}
	return json.Marshal(struct {
		Version      string    `json:"version,omitempty"`
		TemplateRef  string    `json:"template_ref,omitempty"`
		IsDefinition bool      `json:"is_definition,omitempty"`
		Metrics      []*Metric `json:"metrics"`
		Parameters   []param   `json:"parameters,omitempty"`
	}{t.Version, t.TemplateRef, t.IsDefinition, metrics, params})
}
