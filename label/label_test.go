package label

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// sameJSON reports whether a and b are the same JSON up to key order, white space and the
// spelling of numbers (compared by exact decimal value), with a path to the first difference.
func sameJSON(a, b []byte) (bool, string) {
	va, err := decodeAny(a)
	if err != nil {
		return false, "first: " + err.Error()
	}
	vb, err := decodeAny(b)
	if err != nil {
		return false, "second: " + err.Error()
	}
	return sameValue(normApps(va), normApps(vb), "$")
}

// normApps rewrites the ["id","value"] form of apps entries as the object form, which is how
// the package writes them back.
func normApps(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if arr, ok := e.([]any); ok && k == "apps" {
				for i, it := range arr {
					if pair, ok := it.([]any); ok && len(pair) == 2 {
						arr[i] = map[string]any{"id": pair[0], "value": pair[1]}
					}
				}
			}
			x[k] = normApps(e)
		}
	case []any:
		for i := range x {
			x[i] = normApps(x[i])
		}
	}
	return v
}

func decodeAny(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func sameValue(a, b any, path string) (bool, string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false, fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return false, path + "." + k + ": missing"
			}
			if ok, why := sameValue(v, w, path+"."+k); !ok {
				return false, why
			}
		}
		return true, ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false, fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		for i := range x {
			if ok, why := sameValue(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return false, why
			}
		}
		return true, ""
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false, fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		if !sameDecimal(string(x), string(y)) {
			return false, fmt.Sprintf("%s: %s vs %s", path, x, y)
		}
		return true, ""
	default:
		if !reflect.DeepEqual(a, b) {
			return false, fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		return true, ""
	}
}

func roundTrip(t *testing.T, data []byte) *Label {
	t.Helper()
	l, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	out, err := json.Marshal(l)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if ok, why := sameJSON(data, out); !ok {
		t.Fatalf("written back differs: %s\nin:  %s\nout: %s", why, data, out)
	}
	return l
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSpecExamplesRoundTrip: the format description's example and a label holding every
// object type parse, validate and write back semantically equal.
func TestSpecExamplesRoundTrip(t *testing.T) {
	for _, name := range []string{"spec-example.json", "every-type.json"} {
		t.Run(name, func(t *testing.T) {
			l := roundTrip(t, readFile(t, name))
			if err := l.Validate(); err != nil {
				t.Fatalf("Validate:\n%v", err)
			}
		})
	}
}

// TestOnePerObjectType: each object of every-type.json alone in a label round-trips, validates,
// and decodes to its own Go type.
func TestOnePerObjectType(t *testing.T) {
	var doc struct{ Objs []json.RawMessage }
	if err := json.Unmarshal(readFile(t, "every-type.json"), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Text": "*label.Text", "Rect": "*label.Rect", "PolyLine": "*label.PolyLine", "ObjectGroup": "*label.Group",
		"StaticBitmap": "*label.StaticBitmap", "Code128": "*label.Code128", "GS1-128": "*label.GS1128",
		"Code39": "*label.Code39", "ITF": "*label.ITF", "EAN-13": "*label.EAN13", "UPC-A": "*label.UPCA",
		"PDF417": "*label.PDF417", "DataMatrix": "*label.DataMatrix", "GS1-DataMatrix": "*label.GS1DataMatrix",
		"GS1-DataMatrix-Plain": "*label.GS1DataMatrixPlain", "GS1-QRCode": "*label.GS1QRCode",
		"GS1-QRCode-Plain": "*label.GS1QRCodePlain",
	}
	seen := map[string]bool{}
	for _, raw := range doc.Objs {
		data := []byte(`{"format":3,"width":50,"height":30,"objs":[` + string(raw) + `]}`)
		l := roundTrip(t, data)
		typ := l.Objs[0].Type()
		if got := fmt.Sprintf("%T", l.Objs[0]); got != want[typ] {
			t.Errorf("%s decodes to %s, want %s", typ, got, want[typ])
		}
		if err := l.Validate(); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		seen[typ] = true
	}
	for typ := range want {
		if !seen[typ] {
			t.Errorf("no example of %s", typ)
		}
	}
}

// TestNothingLost: unknown label and object properties (anchors and a font's included),
// unknown types, a known property of the wrong shape and numbers float64 cannot hold come back
// as written; Validate reports only the wrong shapes.
func TestNothingLost(t *testing.T) {
	data := readFile(t, "unknown-content.json")
	l := roundTrip(t, data)
	if _, ok := l.Objs[0].(*Unknown); !ok || l.Objs[0].Type() != "Ellipse" {
		t.Errorf("Ellipse: got %T %q", l.Objs[0], l.Objs[0].Type())
	}
	if l.Margin == nil || *l.Margin != 2.5 || l.PrintDelay != nil {
		t.Errorf("margin: %v, printDelay %v", l.Margin, l.PrintDelay)
	}
	out, _ := json.Marshal(l)
	if !bytes.Contains(out, []byte(`123456789012345678901234567890`)) || !bytes.Contains(out, []byte(`1.00000000000000000001`)) || !bytes.Contains(out, []byte(`1e400`)) {
		t.Errorf("numbers not kept: %s", out)
	}
	got := problemStrings(l)
	want := []string{
		`objs[3].size: must be an object {"width":W,"height":H}`,
		`objs[4].width: is a number out of range`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

func problemStrings(l *Label) []string {
	var s []string
	for _, p := range ProblemsOf(l.Validate()) {
		s = append(s, p.Error())
	}
	return s
}

// TestWrittenAsSet: a property holding 0, false or "" is written; an absent one is not added;
// apps are written as objects; margin stays margin.
func TestWrittenAsSet(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":0,"height":0,"margin":0,"objs":[
		{"type":"Code39","x":0,"y":0,"text":"","barHeight":0,"checkDigit":false},
		{"type":"GS1-128","apps":[["01","09501101530003"]],"barHeight":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(l)
	want := `{"format":3,"width":0,"height":0,"margin":0,"objs":[{"type":"Code39","x":0,"y":0,"text":"","barHeight":0,"checkDigit":false},{"type":"GS1-128","apps":[{"id":"01","value":"09501101530003"}],"barHeight":1}]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

// TestParseRefuses: Parse refuses only what is not a label at all.
func TestParseRefuses(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:           "not a JSON object",
		`"x"`:          "not a JSON object",
		`{"objs":{}}`:  "objs: must be an array of objects",
		`{"objs":[1]}`: "objs[0]: must be an object",
		`{"objs":[{"type":"ObjectGroup","children":[[]]}]}`: "objs[0].children[0]: must be an object",
		`{"objs":[{"type":"ObjectGroup","children":3}]}`:    "objs[0].children: must be an array of objects",
		`{"objs":[]`: "unexpected end",
		"\n{\"format\": 3,\n \"objs\": [{\"type\": \"Text\",}]}": "invalid JSON at line 3, column 27: invalid character '}' looking for beginning of object key string",
	} {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{`{}`, `{"objs":[]}`, `{"objs":[{}]}`, ` {"a":null} `} {
		if _, err := Parse([]byte(in)); err != nil {
			t.Errorf("Parse(%s): %v", in, err)
		}
	}
}

// TestNullListKept: objs or children written null (as an encoder writes an empty list) is read,
// kept as written and reported, not a label Parse refuses whole.
func TestNullListKept(t *testing.T) {
	for in, want := range map[string]string{
		`{"format":3,"width":10,"height":10,"objs":[{"type":"ObjectGroup","children":null},{"type":"Text","text":"x"}]}`: "objs[0].children: must be an array of objects",
		`{"format":3,"width":10,"height":10,"objs":null}`:                                                                "objs: must be an array of objects",
	} {
		l, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%s): %v", in, err)
			continue
		}
		if out, _ := json.Marshal(l); string(out) != in {
			t.Errorf("written back as %s, want %s", out, in)
		}
		if ps := ProblemsOf(l.Validate()); len(ps) == 0 || ps[0].Error() != want {
			t.Errorf("Validate(%s) = %v, want first %q", in, ps, want)
		}
	}
}

// TestNilObjects: a nil object built in Go, as an interface or a typed nil pointer, is a
// problem Validate names and an error of Marshal, never a panic; so is a nil label.
func TestNilObjects(t *testing.T) {
	for _, o := range []Object{nil, (*Text)(nil), (*Rect)(nil), (*Group)(nil), (*Unknown)(nil), (*GS1QRCodePlain)(nil)} {
		l := &Label{Format: Ptr(3), Width: Ptr(10.0), Height: Ptr(10.0),
			Objs: []Object{&Group{Children: []Object{o}}}}
		if err := l.Validate(); err == nil || err.Error() != "objs[0].children[0]: is nil" {
			t.Errorf("%T: Validate = %v", o, err)
		}
		if _, err := json.Marshal(l); err == nil || !strings.Contains(err.Error(), "children[0] is nil") {
			t.Errorf("%T: Marshal = %v", o, err)
		}
	}
	var l *Label
	if err := l.Validate(); err == nil || err.Error() != "the label is nil" {
		t.Errorf("nil label: Validate = %v", err)
	}
}

// TestValidateNamesEveryProblem: every problem at once, each by the maker's property path.
func TestValidateNamesEveryProblem(t *testing.T) {
	l, err := Parse([]byte(`{"format":2,"height":-1,"rotation":"CW45","objs":[
		{"type":"Text","text":"{YEAR","font":{"style":"Bold","height":0},"hAlign":"MIDDLE"},
		{"type":"PolyLine","points":[1,2,3]},
		{"type":"ObjectGroup","children":[{"type":"DataMatrix","text":"x","moduleSize":0,"size":{"width":15,"height":15}}]},
		{"type":"Code128","text":"x"},
		{"type":"ITF","text":"123","barHeight":1},
		{"type":"EAN-13","text":"9501101530004","barHeight":1},
		{"type":"UPC-A","text":"1234","barHeight":1},
		{"type":"PDF417","text":"x","barWidth":0.3,"errorCorrection":9,"barColor":"}"},
		{"type":"GS1-QRCode","apps":[{"id":"01","value":"{X"}],"size":22,"eccLevel":"X"},
		{"type":"DataMatrix","text":"x","size":{"width":"16","height":16}},
		{"type":"StaticBitmap","bitmap":"***","width":1},
		{"x":1},
		{"type":"GS1-128","apps":[["01"],{"id":"10","value":"x"}],"barHeight":1}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := problemStrings(l)
	want := []string{
		"width: is mandatory",
		"format: must be 3",
		"height: must be at least 0",
		"rotation: must be one of NONE, CW90, CW180, CCW90",
		"objs[0].text: dynamic text has 1 unclosed {",
		"objs[0].font.family: is mandatory",
		"objs[0].font.height: must be greater than 0",
		"objs[0].color: is mandatory",
		"objs[0].hAlign: must be one of LEFT, CENTER, RIGHT, JUSTIFIED",
		"objs[1].points: must hold at least 2 points (4 numbers)",
		"objs[2].children[0].moduleSize: must be greater than 0",
		"objs[2].children[0].size: 15x15 is not a Data Matrix (ECC 200) size",
		"objs[3].barHeight: is mandatory",
		"objs[4].text: must hold an even number of digits, not 3",
		"objs[5].text: check digit is 4, must be 3",
		"objs[6].text: must be 11 digits (the check digit is computed) or 12, not 4",
		"objs[7].barColor: dynamic text has a } without { at byte 0",
		"objs[7].errorCorrection: must be from 0 to 8",
		"objs[8].apps[0].value: dynamic text has 1 unclosed {",
		"objs[8].size: must be a QR Code size: 21, 25, ... 177 modules (version 1 to 40)",
		"objs[8].eccLevel: must be one of L, M, Q, H",
		"objs[9].size.width: must be an integer",
		"objs[10].height: is mandatory",
		"objs[10].bitmap: must be base64: illegal base64 data at input byte 0",
		"objs[11].type: is mandatory",
		`objs[12].apps[0]: must be {"id":"..","value":".."} or ["..",".."] with string values`,
	}
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
	for _, p := range ProblemsOf(l.Validate()) {
		for _, goName := range []string{"BarHeight", "ModuleSize", "Objs", "Children", "ErrorCorrection"} {
			if strings.Contains(p.Path, goName) {
				t.Errorf("%s names a Go field", p)
			}
		}
	}
}

// TestValidateGoValues: labels built in Go are checked the same way, NaN included.
func TestValidateGoValues(t *testing.T) {
	nan := 0.0
	nan = nan / nan
	l := &Label{Format: Ptr(3), Width: Ptr(50.0), Height: Ptr(nan), Objs: []Object{
		&Code128{Anchor: Anchor{X: Ptr(1.0), Y: Ptr(1.0)}, Text: Ptr("x"), BarHeight: Ptr(-1.0)},
		nil,
	}}
	got := problemStrings(l)
	want := []string{"height: must be a finite number", "objs[0].barHeight: must be greater than 0", "objs[1]: is nil"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if _, err := json.Marshal(l); err == nil {
		t.Error("a NaN height marshals")
	}
}

// TestBracesInEveryDynProperty: every property that may hold dynamic text has its braces
// checked, the colours of rectangles, bitmaps and the label included.
func TestBracesInEveryDynProperty(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":1,"height":1,"bgColor":"{a","objs":[
		{"type":"Rect","fillColor":"}"},
		{"type":"StaticBitmap","bitmap":"","width":1,"height":1,"fgColor":"{","bgColor":"{{x}"},
		{"type":"PolyLine","points":[0,0,1,1],"color":"{"},
		{"type":"DataMatrix","text":"{x","color":"{"},
		{"type":"GS1-128","barHeight":1,"apps":[["01","{x"]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := problemStrings(l)
	want := []string{
		"bgColor: dynamic text has 1 unclosed {",
		"objs[0].fillColor: dynamic text has a } without { at byte 0",
		"objs[1].fgColor: dynamic text has 1 unclosed {",
		"objs[1].bgColor: dynamic text has 1 unclosed {",
		"objs[2].color: dynamic text has 1 unclosed {",
		"objs[3].text: dynamic text has 1 unclosed {",
		"objs[3].color: dynamic text has 1 unclosed {",
		"objs[4].apps[0].value: dynamic text has 1 unclosed {",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestGroupDepth: groups nest up to MaxGroupDepth levels and round-trip; deeper is refused
// by name, so that a hostile label cannot make Parse quadratic.
func TestGroupDepth(t *testing.T) {
	nest := func(d int) []byte {
		return []byte(`{"objs":[` + strings.Repeat(`{"type":"ObjectGroup","children":[`, d) + `{"type":"Text","text":"deep"}` + strings.Repeat(`]}`, d) + `]}`)
	}
	roundTrip(t, nest(MaxGroupDepth))
	for _, d := range []int{MaxGroupDepth + 1, 4000} {
		_, err := Parse(nest(d))
		if err == nil || !strings.Contains(err.Error(), "groups nest deeper than 64 levels") || !strings.HasPrefix(err.Error(), "label: objs[0].children[0].children") {
			t.Errorf("depth %d: %v", d, err)
		}
	}
}

// TestModuleMM: a label's moduleSize wins; without one the module is 5 dots.
func TestModuleMM(t *testing.T) {
	if got := ModuleMM(nil, 300); got < 0.4233 || got > 0.4234 {
		t.Errorf("default at 300 dpi: %v mm", got)
	}
	if got := ModuleMM(Ptr(0.5), 300); got != 0.5 {
		t.Errorf("set: %v", got)
	}
}
