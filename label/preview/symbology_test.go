package preview_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
)

// drawnAsAsked reports whether the preview draws the one object of l as the label asks, and
// the warning that says it does not: a marked box, or another size than the one asked for.
func drawnAsAsked(t *testing.T, l *label.Label) (bool, string) {
	t.Helper()
	_, warns, err := preview.Render(l, &preview.Options{DPI: 2.54}) // 40 x 40 pixels: the encoders, not the picture
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		s := w.String()
		for _, m := range []string{"not drawn", "drawn the smallest that fits", "no GS1 data", "drawn square"} {
			if strings.Contains(s, m) {
				return false, s
			}
		}
	}
	return true, ""
}

// symbolProblem returns Validate's problem of the object's data as its symbology holds it
// (of its text, apps, or the object itself; not a GS1 rule's), or "".
func symbolProblem(l *label.Label) string {
	for _, p := range l.Problems() {
		gs1 := strings.HasPrefix(p.Msg, "element ") || strings.HasPrefix(p.Msg, "GS1 element string")
		if p.Path == "objs[0]" || (p.Path == "objs[0].text" || p.Path == "objs[0].apps") && !gs1 {
			return p.Error()
		}
	}
	return ""
}

func oneObject(t *testing.T, obj map[string]any) *label.Label {
	t.Helper()
	obj["x"], obj["y"] = 1, 1
	b, _ := json.Marshal(map[string]any{"format": 3, "width": 400, "height": 400, "objs": []any{obj}})
	return parse(t, string(b))
}

// TestValidateRefusesWhatCannotBeDrawn: every symbol the preview cannot draw as the label asks
// (a character outside its set, more data than it holds, more than the size asked for holds,
// no GS1 data) is a problem Validate reports before anything prints, and what it draws is
// none, symbology by symbology, at the edges of each capacity (the last length that fits and
// the first that does not, for each QR Code size and level and each of its modes, for Data
// Matrix sizes square and rectangular, and for PDF417 at its levels).
func TestValidateRefusesWhatCannotBeDrawn(t *testing.T) {
	var checked, refused int
	check := func(name string, obj map[string]any) bool {
		t.Helper()
		l := oneObject(t, obj)
		drawn, warn := drawnAsAsked(t, l)
		problem := symbolProblem(l)
		checked++
		if !drawn {
			refused++
		}
		if drawn == (problem != "") {
			t.Errorf("%s: drawn as asked %v (%s), Validate: %q", name, drawn, warn, problem)
		}
		return drawn
	}
	for _, c := range []struct {
		name string
		obj  map[string]any
	}{
		{"Code39 upper", map[string]any{"type": "Code39", "text": "ABC-12 $/+%.", "barHeight": 10}},
		{"Code39 lower", map[string]any{"type": "Code39", "text": "abc", "barHeight": 10}},
		{"Code39 star", map[string]any{"type": "Code39", "text": "A*B", "barHeight": 10}},
		{"Code128 ASCII", map[string]any{"type": "Code128", "text": "Hello, World! ~{}", "barHeight": 10}},
		{"Code128 80", map[string]any{"type": "Code128", "text": strings.Repeat("A", 80), "barHeight": 10}},
		{"Code128 81", map[string]any{"type": "Code128", "text": strings.Repeat("A", 81), "barHeight": 10}},
		{"Code128 e-acute", map[string]any{"type": "Code128", "text": "caf\u00e9", "barHeight": 10}},
		{"Code128 FNC escape", map[string]any{"type": "Code128", "text": "a\u00f1b", "barHeight": 10}},
		{"GS1-128 short", map[string]any{"type": "GS1-128", "barHeight": 10, "apps": [][]string{{"01", "09501101530003"}, {"10", "AB12"}}}},
		{"GS1-128 over 80", map[string]any{"type": "GS1-128", "barHeight": 10, "apps": [][]string{{"01", "09501101530003"}, {"10", strings.Repeat("A", 20)}, {"21", strings.Repeat("B", 20)}, {"240", strings.Repeat("C", 30)}}}},
		{"GS1-128 empty", map[string]any{"type": "GS1-128", "barHeight": 10, "apps": []any{}}},
		{"GS1-DataMatrix empty", map[string]any{"type": "GS1-DataMatrix", "apps": []any{}}},
		{"GS1-QRCode empty", map[string]any{"type": "GS1-QRCode", "apps": []any{}}},
		{"GS1-QRCode-Plain empty", map[string]any{"type": "GS1-QRCode-Plain", "text": ""}},
		{"DataMatrix over 144x144", map[string]any{"type": "DataMatrix", "text": strings.Repeat("a", 2500)}},
		{"DataMatrix digits 144x144", map[string]any{"type": "DataMatrix", "text": strings.Repeat("1", 3116)}},
		{"DataMatrix digits over", map[string]any{"type": "DataMatrix", "text": strings.Repeat("1", 3118)}},
		// Given whole to the encoder, whose look-ahead is quadratic in a run of digits, this
		// took longer than 40 s to preview; refused on its count, both take milliseconds.
		{"DataMatrix 300,000 digits", map[string]any{"type": "DataMatrix", "text": strings.Repeat("1", 300000)}},
		{"GS1-DataMatrix rectangular too long", map[string]any{"type": "GS1-DataMatrix", "rectangular": true, "apps": [][]string{{"01", "09501101530003"}, {"10", strings.Repeat("A", 20)}, {"21", strings.Repeat("B", 20)}, {"240", strings.Repeat("C", 30)}}}},
	} {
		check(c.name, c.obj)
	}

	// The edges of capacity: for each size and level (QR Code) or size (Data Matrix), the
	// longest data of each kind that Validate lets through at that size, and one character
	// more, which the preview must draw and refuse (found by Validate, which is quick, so
	// that only the two sides of each edge are drawn).
	edge := func(name string, mk func(n int) map[string]any, hi int) {
		t.Helper()
		lo := 1
		if !check(fmt.Sprintf("%s n=%d", name, lo), mk(lo)) {
			return
		}
		if symbolProblem(oneObject(t, mk(hi))) == "" {
			t.Fatalf("%s: n=%d is no problem: the search needs a larger bound", name, hi)
		}
		for lo+1 < hi { // Validate lets lo through and not hi
			mid := (lo + hi) / 2
			if symbolProblem(oneObject(t, mk(mid))) == "" {
				lo = mid
			} else {
				hi = mid
			}
		}
		check(fmt.Sprintf("%s n=%d", name, lo), mk(lo))
		check(fmt.Sprintf("%s n=%d", name, hi), mk(hi))
	}
	kinds := map[string]func(n int) string{
		"digits":       func(n int) string { return strings.Repeat("7", n) },
		"alphanumeric": func(n int) string { return strings.Repeat("A%", n/2) + strings.Repeat("B", n%2) },
		"byte":         func(n int) string { return strings.Repeat("a", n) },
		"GS separated": func(n int) string { return strings.Repeat("12\x1d", n/3) + strings.Repeat("3", n%3) },
	}
	for _, qr := range []struct {
		size int
		ecc  string
	}{{21, "L"}, {21, "H"}, {57, "M"}, {177, "L"}} {
		for kind, data := range kinds {
			edge(fmt.Sprintf("GS1-QRCode-Plain %d %s %s", qr.size, qr.ecc, kind), func(n int) map[string]any {
				return map[string]any{"type": "GS1-QRCode-Plain", "size": qr.size, "eccLevel": qr.ecc, "moduleSize": 1, "text": "10" + data(n)}
			}, 4*qr.size*qr.size/3)
		}
	}
	for _, sz := range [][2]int{{10, 10}, {52, 52}, {144, 144}, {48, 16}} {
		for kind, data := range kinds {
			if kind == "alphanumeric" {
				continue
			}
			edge(fmt.Sprintf("GS1-DataMatrix-Plain %dx%d %s", sz[0], sz[1], kind), func(n int) map[string]any {
				return map[string]any{"type": "GS1-DataMatrix-Plain", "size": map[string]int{"width": sz[0], "height": sz[1]}, "rectangular": sz[0] != sz[1], "moduleSize": 1, "text": "10" + data(n)}
			}, 2*sz[0]*sz[1])
			edge(fmt.Sprintf("DataMatrix %dx%d %s", sz[0], sz[1], kind), func(n int) map[string]any {
				return map[string]any{"type": "DataMatrix", "size": map[string]int{"width": sz[0], "height": sz[1]}, "rectangular": sz[0] != sz[1], "moduleSize": 1, "text": data(n)}
			}, 2*sz[0]*sz[1])
		}
	}
	for _, ec := range []any{nil, 0, 8} {
		for kind, data := range kinds {
			edge(fmt.Sprintf("PDF417 errorCorrection %v %s", ec, kind), func(n int) map[string]any {
				o := map[string]any{"type": "PDF417", "barWidth": 0.3, "text": data(n)}
				if ec != nil {
					o["errorCorrection"] = ec
				}
				return o
			}, 8200)
		}
	}
	check("PDF417 euro", map[string]any{"type": "PDF417", "barWidth": 0.3, "text": "5 €"})
	t.Logf("%d symbols checked, %d of them not drawn as asked", checked, refused)
}
