package preview_test

import (
	"reflect"
	"testing"

	"github.com/labelprinter/go-labelprinter/label/preview"
)

// TestQuietZonesMarked: the preview leaves a symbol's quiet zone and light parts unpainted, as
// the printer prints only the dark, so another object's marks there show, drawn before the
// symbol or after; each such symbol is warned about with where the marks are. The zone is
// the symbology's own (4 modules for QR Code, 10 for GS1-128), even with quietZone false; a
// mark just outside it, or a white one, is not warned about.
func TestQuietZonesMarked(t *testing.T) {
	// At 10 px per mm: a QR Code of 21 modules of 0.5 mm at x 20..30.5 mm, its quiet zone
	// from 18 mm.
	const qr = `{"type":"GS1-QRCode","x":20,"y":10,"moduleSize":0.5,"apps":[["10","A"]]}`
	const qrNoQZ = `{"type":"GS1-QRCode","x":20,"y":10,"moduleSize":0.5,"quietZone":false,"apps":[["10","A"]]}`
	const inQZ = `{"type":"Rect","x":17,"y":12,"width":1.5,"height":1}`     // 17..18.5 mm
	const besideQZ = `{"type":"Rect","x":16,"y":12,"width":1.9,"height":1}` // 16..17.9 mm
	const whiteInQZ = `{"type":"Rect","x":17,"y":12,"width":1.5,"height":1,"fillColor":"white"}`
	const qzWarning = "another object marks the symbol's quiet zone at x 18.0..18.5 mm, y 12.0..13.0 mm: a scanner may not read it"
	for _, c := range []struct {
		name  string
		objs  string
		want  []string
		darkX int // a pixel of the zone that must stay dark (not painted), or 0
	}{
		{"alone", qr, nil, 0},
		{"a mark drawn before", inQZ + "," + qr, []string{"objs[1]: " + qzWarning}, 181},
		{"a mark drawn after", qr + "," + inQZ, []string{"objs[0]: " + qzWarning}, 181},
		{"quietZone false: the symbology's zone all the same", inQZ + "," + qrNoQZ, []string{"objs[1]: " + qzWarning}, 181},
		{"a mark beside the zone", besideQZ + "," + qr, nil, 0},
		{"a white mark", whiteInQZ + "," + qr, nil, 0},
		{"a line across a GS1-128's bars", `{"type":"GS1-128","x":20,"y":10,"barWidth":0.3,"barHeight":10,"apps":[["10","A"]]},` +
			`{"type":"PolyLine","points":[15,15,45,15],"lineWidth":0.2}`, []string{
			"objs[0]: another object marks the symbol's quiet zone at x 17.0..20.0 mm, y 14.9..15.1 mm and x 43.7..45.0 mm, y 14.9..15.1 mm: a scanner may not read it",
			"objs[0]: another object marks the symbol's light parts at x 20.6..43.1 mm, y 14.9..15.1 mm: a scanner may not read it",
		}, 175},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, w := render(t, parse(t, `{"format":3,"width":60,"height":40,"objs":[`+c.objs+`]}`), &preview.Options{DPI: 254})
			var got []string
			for _, x := range w {
				got = append(got, x.String())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("warnings:\n%q\nwant:\n%q", got, c.want)
			}
			if c.darkX != 0 && !dark(img, c.darkX, 125) && !dark(img, c.darkX, 150) {
				t.Errorf("the mark at x = %d px was painted over", c.darkX)
			}
		})
	}
}

// TestQuietZonesBounded: the check reads at most 4 times the image's pixels, so a label of many
// symbols over each other costs no more than a few images; the symbols past it are warned
// about as not checked.
func TestQuietZonesBounded(t *testing.T) {
	objs := ""
	for i := 0; i < 20; i++ {
		if i > 0 {
			objs += ","
		}
		objs += `{"type":"GS1-QRCode","x":5,"y":5,"moduleSize":0.8,"apps":[["10","A"]]}`
	}
	_, w := render(t, parse(t, `{"format":3,"width":30,"height":30,"objs":[`+objs+`]}`), &preview.Options{DPI: 254})
	var got []string
	for _, x := range w {
		got = append(got, x.String())
	}
	// Each symbol with its zone is 23.2 x 23.2 mm of the 30 x 30 mm image (and marks none of
	// the others, all alike): 6 are read, then the seventh is past the budget.
	if len(got) != 1 || got[0] != "objs[6]: the quiet zones of this and 13 more symbols were not checked for other marks: the label's symbols cover over 4 times its area" {
		t.Errorf("%d warnings:\n%q", len(got), got)
	}
}

// TestGS1128Length: a GS1-128 with its quiet zones longer than 165.10 mm is warned about; the
// same data at half the X-dimension is not.
func TestGS1128Length(t *testing.T) {
	for _, c := range []struct {
		barWidth string
		want     []string
	}{
		{"0.508", nil},
		{"1.016", []string{"objs[0]: GS1-128 with its quiet zones is 178.8 mm long, over the 165.10 mm the GS1 General Specifications allow"}},
	} {
		_, w := render(t, parse(t, `{"format":3,"width":200,"height":40,"objs":[{"type":"GS1-128","x":11,"y":5,"barHeight":32,"barWidth":`+
			c.barWidth+`,"apps":[["00","106141411234567897"]]}]}`), &preview.Options{DPI: 300})
		var got []string
		for _, x := range w {
			got = append(got, x.String())
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("barWidth %s: %q", c.barWidth, got)
		}
	}
}
