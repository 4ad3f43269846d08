package label

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Label is a label in the maker's format 3. Lengths are millimetres. Every property is a
// pointer (or a nil slice) so that an absent property stays absent when the label is written
// back; [Ptr] and [Or] make literals and defaults short.
type Label struct {
	// Format is the format number, 3. Mandatory.
	Format *int
	// Width is the label width in mm; 0 lets the printer compute it. Mandatory.
	Width *float64
	// Height is the label height in mm; 0 lets the printer compute it. Mandatory.
	Height *float64
	// Objs is the content, drawn in order. Mandatory (it may be empty).
	Objs []Object
	// BgColor is the background colour.
	BgColor *string
	// PrintDelay overrides the print delay, in mm.
	PrintDelay *float64
	// Margin is PrintDelay's deprecated name; a label that uses it keeps it.
	Margin *float64
	// HDPI and VDPI override the resolution, in dots per inch.
	HDPI, VDPI *float64
	// VOffset overrides the vertical offset in mm; positive moves the label up.
	VOffset *float64
	// Rotation is NONE, CW90, CW180 or CCW90.
	Rotation *string
	// Stretch stretches the label; 1 is none.
	Stretch *float64
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

func (l *Label) fields() []field {
	return []field{
		{name: "format", ptr: &l.Format},
		{name: "width", ptr: &l.Width},
		{name: "height", ptr: &l.Height},
		{name: "bgColor", ptr: &l.BgColor, dyn: true},
		{name: "printDelay", ptr: &l.PrintDelay},
		{name: "margin", ptr: &l.Margin},
		{name: "hdpi", ptr: &l.HDPI},
		{name: "vdpi", ptr: &l.VDPI},
		{name: "vOffset", ptr: &l.VOffset},
		{name: "rotation", ptr: &l.Rotation},
		{name: "stretch", ptr: &l.Stretch},
		{name: "objs", ptr: &l.Objs},
	}
}

func (l *Label) extra() *map[string]json.RawMessage { return &l.Extra }
func (l *Label) literals() *map[string]lit          { return &l.lits }

// MarshalJSON writes the label with every property that is set and Extra, nothing else.
func (l Label) MarshalJSON() ([]byte, error) {
	return encodeProps(make([]byte, 0, 256), "", &l)
}

// UnmarshalJSON reads a label the way [Parse] does.
func (l *Label) UnmarshalJSON(data []byte) error {
	p, err := Parse(data)
	if err != nil {
		return err
	}
	*l = *p
	return nil
}

// ErrNotJSONObject is what [Parse] returns, wrapped, for data that is not a JSON object at
// all (invalid JSON, an array, a string): not a label with problems but not a label.
var ErrNotJSONObject = errors.New("label: not a JSON object")

// notObject is invalid JSON, which errors.Is finds to be ErrNotJSONObject too.
type notObject struct{ error }

func (e notObject) Unwrap() error        { return e.error }
func (e notObject) Is(target error) bool { return target == ErrNotJSONObject }

// Parse reads a label. It accepts any JSON object (after a UTF-8 byte order mark, if any) whose
// objs, and each group's children, is an array of objects (or null, kept as written and
// reported by Validate): properties this package does not model and objects of unknown types are
// kept, and a known property of the wrong shape is kept as written and reported by
// [Label.Validate], so that writing the label back loses nothing.
func Parse(data []byte) (*Label, error) {
	// A UTF-8 byte order mark, which some editors write at the start of a file, is not part of
	// the JSON: it is skipped (and not written back).
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	all := data
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 || data[0] != '{' {
		return nil, ErrNotJSONObject
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v) // for the decoder's message and offset
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// The place, so that a slip in a file of a thousand lines can be found.
			at := max(int(se.Offset)-1, 0) + len(all) - len(data) // the byte the decoder stopped at
			line := 1 + bytes.Count(all[:at], []byte("\n"))
			col := at - bytes.LastIndexByte(all[:at], '\n')
			return nil, notObject{fmt.Errorf("label: invalid JSON at line %d, column %d: %w", line, col, err)}
		}
		return nil, notObject{fmt.Errorf("label: %w", err)}
	}
	l := &Label{}
	ok, err := decodeProps(newScanner(data), l, data, "", "")
	if err != nil {
		return nil, fmt.Errorf("label: %w", err)
	}
	if !ok {
		return nil, ErrNotJSONObject
	}
	return l, nil
}

// decodeObjects reads the objects of objs or children; path is "objs" or "objs[2].children".
func decodeObjects(sc *scanner, items []json.RawMessage, path string) ([]Object, error) {
	objs := make([]Object, len(items))
	for i, raw := range items {
		var typ []byte
		isObj := sc.eachMember(raw, func(key, val []byte) bool {
			if k, _ := keyString(key); k == "type" {
				typ = val // the last "type" wins, as it does for encoding/json
			}
			return true
		})
		if !isObj {
			return nil, fmt.Errorf("%s[%d]: must be an object", path, i)
		}
		var o Object
		if typ != nil {
			if name, ok := decodeString(typ); ok {
				o = newObject(name)
			}
		}
		if o == nil {
			objs[i] = &Unknown{Raw: append(json.RawMessage(nil), raw...)}
			continue
		}
		p := ""
		if _, ok := o.(*Group); ok {
			p = path + "[" + strconv.Itoa(i) + "]" // only a group's children can fail
		}
		if _, err := decodeProps(sc, o.(props), raw, p, "type"); err != nil {
			return nil, err
		}
		objs[i] = o
	}
	return objs, nil
}

// Object is one object of a label: a pointer to one of the types of this package ([*Text],
// [*Rect], ..., [*Unknown]).
type Object interface {
	// Type returns the maker's type name, e.g. "GS1-128".
	Type() string
	json.Marshaler
	object()
}

// Positioned is an object with a position anchor; every object type but [PolyLine], [Group]
// and [Unknown] has one.
type Positioned interface {
	Object
	Position() *Anchor
}

// Anchor is the position common to most objects. The maker's page on these common properties
// was not found: x and y are in mm, and CENTER is the one anchor value seen (see the package
// doc for how this package reads them).
type Anchor struct {
	// X and Y are the position in mm.
	X, Y *float64
	// HAnchor and VAnchor say which point of the object X and Y place (CENTER is seen).
	HAnchor, VAnchor *string
}

// Position returns the anchor itself, so that every positioned object offers it.
func (a *Anchor) Position() *Anchor { return a }

func (a *Anchor) fields() []field {
	return []field{
		{name: "x", ptr: &a.X},
		{name: "y", ptr: &a.Y},
		{name: "hAnchor", ptr: &a.HAnchor},
		{name: "vAnchor", ptr: &a.VAnchor},
	}
}

// Font is a Text object's font, which must be installed on the printer.
type Font struct {
	// Family is the font family, e.g. "Arial". Mandatory.
	Family *string
	// Style is the style, e.g. "Regular" or "Bold". Mandatory.
	Style *string
	// Height is the nominal height in mm (a character is smaller). Mandatory.
	Height *float64
	// Width is a horizontal stretch factor (default 1).
	Width *float64
	// Extra holds the properties this package does not model, as written.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

func (f *Font) fields() []field {
	return []field{
		{name: "family", ptr: &f.Family},
		{name: "style", ptr: &f.Style},
		{name: "height", ptr: &f.Height},
		{name: "width", ptr: &f.Width},
	}
}

func (f *Font) extra() *map[string]json.RawMessage { return &f.Extra }
func (f *Font) literals() *map[string]lit          { return &f.lits }

// MarshalJSON writes the font with every property that is set.
func (f Font) MarshalJSON() ([]byte, error) { return encodeProps(nil, "", &f) }

// Size is a Data Matrix symbol size in modules, written {"width":W,"height":H}.
type Size struct {
	// Width and Height are the symbol's modules across and down.
	Width, Height *int
	// Extra holds the properties this package does not model, as written.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

func (s *Size) fields() []field {
	return []field{{name: "width", ptr: &s.Width}, {name: "height", ptr: &s.Height}}
}

func (s *Size) extra() *map[string]json.RawMessage { return &s.Extra }
func (s *Size) literals() *map[string]lit          { return &s.lits }

// MarshalJSON writes the size with every property that is set.
func (s Size) MarshalJSON() ([]byte, error) { return encodeProps(nil, "", &s) }

// App is one GS1 element of apps: an application identifier and its value. It is read from
// {"id":"01","value":"..."} or ["01","..."] and written as the object.
type App struct {
	// ID is the application identifier, e.g. "01".
	ID string
	// Value is its data, dynamic text allowed.
	Value string
	// Extra holds the entry's other properties, as written.
	Extra map[string]json.RawMessage
}

// MarshalJSON writes the entry as {"id":..,"value":..}.
func (a App) MarshalJSON() ([]byte, error) { return a.appendJSON(nil) }

func (a App) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendString(b, a.ID)
	b = append(b, `,"value":`...)
	b = appendString(b, a.Value)
	for _, k := range sortedKeys(a.Extra) {
		if k == "id" || k == "value" {
			continue
		}
		if !json.Valid(a.Extra[k]) {
			return nil, fmt.Errorf("label: apps %s: Extra holds invalid JSON", k)
		}
		b = append(b, ',')
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, a.Extra[k]...)
	}
	return append(b, '}'), nil
}

// Unknown is an object of a type this package does not know (or without a type), kept as
// written.
type Unknown struct {
	// Raw is the object's JSON, written back unchanged.
	Raw json.RawMessage
}

// Type returns the object's "type", or "" when it has none or it is not a string.
func (u *Unknown) Type() string {
	var v struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(u.Raw, &v)
	s, _ := v.Type.(string)
	return s
}

// MarshalJSON returns Raw, which must be a JSON object.
func (u Unknown) MarshalJSON() ([]byte, error) {
	if len(u.Raw) == 0 || !json.Valid(u.Raw) {
		return nil, errors.New("label: Unknown.Raw is not valid JSON")
	}
	return u.Raw, nil
}

func (*Unknown) object() {}

// Ptr returns a pointer to v, for the optional properties of literals: Ptr(2.5).
func Ptr[T any](v T) *T { return &v }

// Or returns *p, or def when p is nil: Or(dm.QuietZone, true).
func Or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
