package label

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the one rule for moving a property between its JSON and its Go field: every
// type lists its properties once, by the maker's name, in fields(), and Parse, MarshalJSON and
// Validate all read that list. A property whose JSON does not fit its field is kept in Extra,
// byte for byte, and Validate names it.

// field is one known property: its maker's name and a pointer to the Go field that holds it.
type field struct {
	name string
	ptr  any // **float64, **int, **string, **bool, **Font, **Size, *[]float64, *[]App, *[]Object
	dyn  bool
}

// lit keeps the literal of a number that float64 would change (more than 15 significant
// digits), written back as long as the field still holds the value it was read as.
type lit struct {
	raw json.RawMessage
	f   float64
	fs  []float64
}

// props is what every type with properties offers the codec.
type props interface {
	fields() []field
	extra() *map[string]json.RawMessage
	literals() *map[string]lit
}

// decodeProps fills p from the JSON object raw: known properties into their fields, anything
// else (and a known property of the wrong shape) into Extra; as encoding/json does, the last
// of two members of one name wins. path names the object in errors; skip is a member the
// caller has read.
func decodeProps(sc *scanner, p props, raw []byte, path string, skip string) (bool, error) {
	fs := p.fields()
	var err error
	ok := sc.eachMember(raw, func(key, val []byte) bool {
		k, ok := keyString(key)
		if !ok {
			return false
		}
		if skip != "" && k == skip {
			return true
		}
		f := lookup(fs, k)
		if f == nil {
			setExtra(p, k, val)
			return true
		}
		fit, ferr := decodeField(sc, p, f, val, path)
		if ferr != nil {
			err = ferr
			return false
		}
		if fit {
			delete(*p.extra(), f.name)
		} else {
			clearField(f.ptr)
			setExtra(p, f.name, val)
		}
		return true
	})
	if err != nil {
		return false, err
	}
	return ok, nil
}

// keyString returns a member's name from its quoted JSON; the names this package knows hold no
// escapes, so the common case costs no decoding.
func keyString(key []byte) (string, bool) {
	return decodeString(key)
}

func clearField(ptr any) {
	switch p := ptr.(type) {
	case **float64:
		*p = nil
	case **int:
		*p = nil
	case **string:
		*p = nil
	case **bool:
		*p = nil
	case **Font:
		*p = nil
	case **Size:
		*p = nil
	case *[]float64:
		*p = nil
	case *[]App:
		*p = nil
	case *[]Object:
		*p = nil
	}
}

// HasProperty reports whether name is a property this package models on v (a *Label, an
// object of this package, a *Font or a *Size). A property of such a name kept in v's Extra is
// one written in the wrong shape, which [Label.Validate] reports as such.
func HasProperty(v any, name string) bool {
	p, ok := v.(props)
	return ok && lookup(p.fields(), name) != nil
}

func lookup(fs []field, name string) *field {
	for i := range fs {
		if fs[i].name == name {
			return &fs[i]
		}
	}
	return nil
}

func setExtra(p props, k string, raw json.RawMessage) {
	e := p.extra()
	if *e == nil {
		*e = make(map[string]json.RawMessage)
	}
	(*e)[k] = append(json.RawMessage(nil), raw...) // raw is a slice of the caller's bytes
}

func setLit(p props, k string, l lit) {
	e := p.literals()
	if *e == nil {
		*e = make(map[string]lit)
	}
	(*e)[k] = l
}

// decodeField decodes raw into f. It reports false when raw does not have the field's shape;
// an error only for children that are not an array of objects, which Parse refuses.
func decodeField(sc *scanner, p props, f *field, raw json.RawMessage, path string) (bool, error) { // path: the object's
	switch ptr := f.ptr.(type) {
	case **float64:
		v, exact, ok := decodeNumber(raw)
		if !ok {
			return false, nil
		}
		if !exact {
			setLit(p, f.name, lit{raw: append(json.RawMessage(nil), raw...), f: v})
		} else {
			delete(*p.literals(), f.name)
		}
		*ptr = &v
	case **int:
		v, ok := decodeInt(raw)
		if !ok {
			return false, nil
		}
		*ptr = &v
	case **string:
		v, ok := decodeString(raw)
		if !ok {
			return false, nil
		}
		*ptr = &v
	case **bool:
		switch string(raw) {
		case "true":
			v := true
			*ptr = &v
		case "false":
			v := false
			*ptr = &v
		default:
			return false, nil
		}
	case **Font:
		v := &Font{}
		if ok, err := decodeProps(sc, v, raw, "", ""); !ok || err != nil {
			return false, err
		}
		*ptr = v
	case **Size:
		v := &Size{}
		if ok, err := decodeProps(sc, v, raw, "", ""); !ok || err != nil {
			return false, err
		}
		*ptr = v
	case *[]float64:
		var items []json.RawMessage
		if !sc.decodeArray(raw, &items) {
			return false, nil
		}
		vs := make([]float64, len(items))
		exact := true
		for i, it := range items {
			v, ex, ok := decodeNumber(it)
			if !ok {
				return false, nil
			}
			exact = exact && ex
			vs[i] = v
		}
		if !exact {
			setLit(p, f.name, lit{raw: append(json.RawMessage(nil), raw...), fs: append([]float64(nil), vs...)})
		} else {
			delete(*p.literals(), f.name)
		}
		*ptr = vs
	case *[]App:
		apps, ok := sc.decodeApps(raw)
		if !ok {
			return false, nil
		}
		*ptr = apps
	case *[]Object:
		path = join(path, f.name)
		if strings.Count(path, ".children") > MaxGroupDepth {
			return false, fmt.Errorf("%s: groups nest deeper than %d levels", path, MaxGroupDepth)
		}
		if string(raw) == "null" {
			// As an encoder writes an empty list (Go's nil slice): kept as written, reported by
			// Validate, so that the rest of the label can still be read and written back.
			return false, nil
		}
		var items []json.RawMessage
		if !sc.decodeArray(raw, &items) {
			return false, fmt.Errorf("%s: must be an array of objects", path)
		}
		objs, err := decodeObjects(sc, items, path)
		if err != nil {
			return false, err
		}
		*ptr = objs
	default:
		panic("label: field " + f.name + " has no codec")
	}
	return true, nil
}

// eachMember calls fn with the quoted name and the value of each member of the JSON object raw,
// in order, until fn returns false; the slices are raw's. raw is valid JSON (Parse checks the
// whole label once); on anything else eachMember reports false and never panics.
func (sc *scanner) eachMember(raw []byte, fn func(key, val []byte) bool) bool {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return false
		}
		ke := sc.skipValue(raw, i)
		if ke < 0 {
			return false
		}
		key := raw[i:ke]
		i = skipWS(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		vs := skipWS(raw, i+1)
		ve := sc.skipValue(raw, vs)
		if ve < 0 {
			return false
		}
		if !fn(key, raw[vs:ve:ve]) {
			return false
		}
		i = skipWS(raw, ve)
		if i >= len(raw) {
			return false
		}
		if raw[i] == '}' {
			return true
		}
		if raw[i] != ',' {
			return false
		}
		i = skipWS(raw, i+1)
	}
	return false
}

// decodeObject splits a JSON object into its members (the last of one name wins).
func (sc *scanner) decodeObject(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	m := make(map[string]json.RawMessage, 8)
	ok := sc.eachMember(raw, func(key, val []byte) bool {
		k, ok := decodeString(key)
		m[k] = val
		return ok
	})
	return m, ok
}

// decodeArray splits a JSON array into its elements, slices of raw; like decodeObject it
// trusts raw to be valid JSON and never panics when it is not.
func (sc *scanner) decodeArray(raw json.RawMessage, items *[]json.RawMessage) bool {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	out := (*items)[:0]
	if out == nil {
		out = make([]json.RawMessage, 0, 8)
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		*items = out
		return true
	}
	for i < len(raw) {
		e := sc.skipValue(raw, i)
		if e < 0 {
			return false
		}
		out = append(out, raw[i:e:e])
		i = skipWS(raw, e)
		if i >= len(raw) {
			return false
		}
		if raw[i] == ']' {
			*items = out
			return true
		}
		if raw[i] != ',' {
			return false
		}
		i = skipWS(raw, i+1)
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanner finds where the JSON values of a label end. Parse gives it the length of every
// object and array of the label (but short ones), found in one pass, so that a group nested 64 levels deep is
// not scanned again at each level; a nil scanner scans each value.
type scanner struct {
	lens map[*byte]int // by the address of its { or [, the length of an object or array
}

// minKeptLen is the shortest object or array whose length a scanner keeps: a shorter one is
// scanned again, at a cost bounded by its length, cheaper than a map entry.
const minKeptLen = 256

// newScanner finds the length of every object and array of data, valid JSON.
func newScanner(data []byte) *scanner {
	sc := &scanner{lens: make(map[*byte]int)}
	var open []int
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			if i = skipString(data, i); i < 0 {
				return nil
			}
			i--
		case '{', '[':
			open = append(open, i)
		case '}', ']':
			if len(open) == 0 {
				return nil
			}
			o := open[len(open)-1]
			open = open[:len(open)-1]
			if n := i + 1 - o; n >= minKeptLen {
				sc.lens[&data[o]] = n
			}
		}
	}
	return sc
}

// decodeArray is sc.decodeArray without a scanner.
func decodeArray(raw json.RawMessage, items *[]json.RawMessage) bool {
	return (*scanner)(nil).decodeArray(raw, items)
}

// decodeApps is sc.decodeApps without a scanner.
func decodeApps(raw json.RawMessage) ([]App, bool) {
	return (*scanner)(nil).decodeApps(raw)
}

// skipValue returns the index just past the JSON value that starts at b[i], or -1.
func (sc *scanner) skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		if sc != nil {
			if n, ok := sc.lens[&b[i]]; ok && i+n <= len(b) {
				return i + n
			}
		}
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' && b[j] != ':' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// skipString returns the index just past the string that starts at b[i], or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// decodeNumber reads a JSON number. exact is false when the float64 does not hold the
// literal's value (more than 15 significant digits that the nearest float64 does not spell).
func decodeNumber(raw json.RawMessage) (v float64, exact, ok bool) {
	if len(raw) == 0 || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return 0, false, false
	}
	s := string(raw)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of float64's range: not a number this package can hold; kept as written.
		return 0, false, false
	}
	return v, numberExact(s, v), true
}

// numberExact reports whether v is exactly the decimal value of the literal s.
func numberExact(s string, v float64) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	if a := math.Abs(v); digits <= 15 && len(s) < 24 && a >= 0x1p-1022 && a <= math.MaxFloat64 {
		// Every decimal of at most 15 significant digits survives a normal float64; one that
		// underflows to 0 or to a subnormal (-1e-400 is -0) may not, and is compared whole.
		return true
	}
	return sameDecimal(s, strconv.FormatFloat(v, 'e', -1, 64))
}

// sameDecimal reports whether two JSON number literals have the same value, in time linear in
// their length (a big.Rat would compute 10^exponent).
func sameDecimal(a, b string) bool {
	da, ea, na := normDecimal(a)
	db, eb, nb := normDecimal(b)
	if da == "" || db == "" {
		return da == db // zero, whatever its sign
	}
	return da == db && ea == eb && na == nb
}

// normDecimal returns the significant digits of a JSON number without leading or trailing
// zeros, the exponent that makes them 0.DIGITS x 10^exp, and the sign. The exponent saturates
// far beyond float64's range.
func normDecimal(s string) (digits string, exp int64, neg bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expPart := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expPart = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	all := intPart + frac
	exp = int64(len(intPart))
	lead := 0
	for lead < len(all) && all[lead] == '0' {
		lead++
	}
	all = strings.TrimRight(all[lead:], "0")
	exp -= int64(lead)
	var e int64
	eneg := false
	if strings.HasPrefix(expPart, "-") {
		eneg, expPart = true, expPart[1:]
	} else {
		expPart = strings.TrimPrefix(expPart, "+")
	}
	for i := 0; i < len(expPart); i++ {
		if e < 1<<40 {
			e = e*10 + int64(expPart[i]-'0')
		}
	}
	if eneg {
		e = -e
	}
	return all, exp + e, neg
}

// decodeInt reads a JSON number holding an integer value, however it is spelled (3, 3.0, 3e0).
func decodeInt(raw json.RawMessage) (int, bool) {
	if n, err := strconv.Atoi(string(raw)); err == nil {
		return n, true
	}
	v, exact, ok := decodeNumber(raw)
	if !ok || !exact || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, false
	}
	return int(v), true
}

func decodeString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeApps reads apps in both documented forms: {"id":..,"value":..} and ["id", "value"].
func (sc *scanner) decodeApps(raw json.RawMessage) ([]App, bool) {
	var items []json.RawMessage
	if !sc.decodeArray(raw, &items) {
		return nil, false
	}
	apps := make([]App, len(items))
	for i, it := range items {
		switch {
		case len(it) > 0 && it[0] == '[':
			var pair []json.RawMessage
			if !sc.decodeArray(it, &pair) || len(pair) != 2 {
				return nil, false
			}
			id, ok1 := decodeString(pair[0])
			val, ok2 := decodeString(pair[1])
			if !ok1 || !ok2 {
				return nil, false
			}
			apps[i] = App{ID: id, Value: val}
		default:
			m, ok := sc.decodeObject(it)
			if !ok {
				return nil, false
			}
			a := &apps[i]
			for k, v := range m {
				switch k {
				case "id", "value":
					s, ok := decodeString(v)
					if !ok {
						return nil, false
					}
					if k == "id" {
						a.ID = s
					} else {
						a.Value = s
					}
				default:
					if a.Extra == nil {
						a.Extra = make(map[string]json.RawMessage)
					}
					a.Extra[k] = append(json.RawMessage(nil), v...)
				}
			}
			if _, ok := m["id"]; !ok {
				return nil, false
			}
			if _, ok := m["value"]; !ok {
				return nil, false
			}
		}
	}
	return apps, true
}

// encodeProps writes p as a JSON object: typeName first when given, then the known properties
// that are set, in fields() order, then Extra in key order.
func encodeProps(b []byte, typeName string, p props) ([]byte, error) {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
	}
	if typeName != "" {
		key("type")
		b = appendString(b, typeName)
	}
	fs := p.fields()
	lits := *p.literals()
	var err error
	set := make(map[string]bool, len(fs))
	for i := range fs {
		f := &fs[i]
		switch ptr := f.ptr.(type) {
		case **float64:
			if *ptr == nil {
				continue
			}
			key(f.name)
			if l, ok := lits[f.name]; ok && l.fs == nil && math.Float64bits(l.f) == math.Float64bits(**ptr) {
				b = append(b, l.raw...)
			} else if b, err = appendFloat(b, **ptr, f.name); err != nil {
				return nil, err
			}
		case **int:
			if *ptr == nil {
				continue
			}
			key(f.name)
			b = strconv.AppendInt(b, int64(**ptr), 10)
		case **string:
			if *ptr == nil {
				continue
			}
			key(f.name)
			b = appendString(b, **ptr)
		case **bool:
			if *ptr == nil {
				continue
			}
			key(f.name)
			b = strconv.AppendBool(b, **ptr)
		case **Font:
			if *ptr == nil {
				continue
			}
			key(f.name)
			if b, err = encodeProps(b, "", *ptr); err != nil {
				return nil, err
			}
		case **Size:
			if *ptr == nil {
				continue
			}
			key(f.name)
			if b, err = encodeProps(b, "", *ptr); err != nil {
				return nil, err
			}
		case *[]float64:
			if *ptr == nil {
				continue
			}
			key(f.name)
			if l, ok := lits[f.name]; ok && l.fs != nil && floatsEqual(l.fs, *ptr) {
				b = append(b, l.raw...)
				break
			}
			b = append(b, '[')
			for j, v := range *ptr {
				if j > 0 {
					b = append(b, ',')
				}
				if b, err = appendFloat(b, v, fmt.Sprintf("%s[%d]", f.name, j)); err != nil {
					return nil, err
				}
			}
			b = append(b, ']')
		case *[]App:
			if *ptr == nil {
				continue
			}
			key(f.name)
			b = append(b, '[')
			for j := range *ptr {
				if j > 0 {
					b = append(b, ',')
				}
				if b, err = (*ptr)[j].appendJSON(b); err != nil {
					return nil, err
				}
			}
			b = append(b, ']')
		case *[]Object:
			if *ptr == nil {
				continue
			}
			key(f.name)
			if b, err = appendObjects(b, *ptr, f.name); err != nil {
				return nil, err
			}
		}
		set[f.name] = true
	}
	extra := *p.extra()
	if len(extra) > 0 {
		keys := make([]string, 0, len(extra))
		for k := range extra {
			// A typed field that is set wins over an Extra entry of the same name.
			if !set[k] && !(typeName != "" && k == "type") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := extra[k]
			if !json.Valid(v) {
				return nil, fmt.Errorf("label: %s: Extra holds invalid JSON", k)
			}
			key(k)
			b = append(b, v...)
		}
	}
	return append(b, '}'), nil
}

// nilObject reports an object that is nil, as an interface or as a nil pointer of an object type
// ((*Text)(nil)), whose methods would dereference it.
func nilObject(o Object) bool {
	if o == nil {
		return true
	}
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func appendObjects(b []byte, objs []Object, name string) ([]byte, error) {
	b = append(b, '[')
	for j, o := range objs {
		if j > 0 {
			b = append(b, ',')
		}
		if nilObject(o) {
			return nil, fmt.Errorf("label: %s[%d] is nil", name, j)
		}
		var err error
		if p, ok := o.(props); ok {
			b, err = encodeProps(b, o.Type(), p) // in place: nested groups are not copied at each level
		} else {
			var ob []byte
			ob, err = o.MarshalJSON()
			b = append(b, ob...)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// appendFloat writes f the way encoding/json does; NaN and infinities have no JSON spelling.
func appendFloat(b []byte, f float64, name string) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("label: %s: %v has no JSON spelling", name, f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64), nil
}

func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
