package preview_test

import (
	"image"
	"image/color"
	"testing"

	"github.com/labelprinter/go-labelprinter/label/preview"
)

// count returns how many pixels of img are c, and the height of the rows holding any.
func count(img *image.RGBA, c color.RGBA) (n, rows int) {
	for y := 0; y < img.Bounds().Dy(); y++ {
		any := false
		for x := 0; x < img.Bounds().Dx(); x++ {
			if img.RGBAAt(x, y) == c {
				n++
				any = true
			}
		}
		if any {
			rows++
		}
	}
	return n, rows
}

// columns returns the first and last columns holding a dark pixel anywhere.
func columns(img *image.RGBA) (int, int) {
	first, last := -1, -1
	for y := 0; y < img.Bounds().Dy(); y++ {
		if a, b := span(img, y, false); a >= 0 {
			if first < 0 || a < first {
				first = a
			}
			last = max(last, b)
		}
	}
	return first, last
}

func TestTextStyles(t *testing.T) {
	text := func(s, format, width string) string {
		return `{"format":3,"width":80,"height":20,"objs":[{"type":"Text","x":2,"y":2,"text":"` + s +
			`","styleFormat":"` + format + `","font":{"family":"Go","style":"Regular","height":4` + width + `},"color":"black"}]}`
	}
	opts := &preview.Options{DPI: 254}
	black := color.RGBA{0, 0, 0, 255}
	plain, _ := render(t, parse(t, text("Bold text", "NONE", "")), opts)
	bold, w := render(t, parse(t, text("*Bold text*", "SIMPLE", "")), opts)
	if len(w) != 0 {
		t.Error(w)
	}
	p, _ := count(plain, black)
	if q, _ := count(bold, black); q <= p*11/10 {
		t.Errorf("SIMPLE *...* draws %d black pixels, NONE %d: not bold", q, p)
	}
	adv, w := render(t, parse(t, text(`a [color=\"red\" font-height=\"8mm\"]RED[] b`, "ADVANCED", "")), opts)
	if len(w) != 0 {
		t.Error(w)
	}
	_, redRows := count(adv, color.RGBA{255, 0, 0, 255})
	if redRows < 50 { // capitals of an 8 mm font, 10 px per mm
		t.Errorf("ADVANCED 8 mm red text spans %d rows", redRows)
	}
	a0, a1 := columns(plain)
	wide, _ := render(t, parse(t, text("Bold text", "NONE", `,"width":2`)), opts)
	b0, b1 := columns(wide)
	if r := float64(b1-b0) / float64(a1-a0); r < 1.9 || r > 2.1 {
		t.Errorf("font width 2 draws %d..%d, width 1 %d..%d: ratio %.2f", b0, b1, a0, a1, r)
	}
}

// TestPDF417Structure: every row starts with the start pattern and ends with the stop
// pattern at the module width, rows are three modules high, and the options the encoder
// cannot honour are warned about (zxing-cpp reads the data: TestBarcodesZXingCpp).
func TestPDF417Structure(t *testing.T) {
	l := parse(t, `{"format":3,"width":80,"height":40,"objs":[{"type":"PDF417","x":5,"y":5,"text":"PDF417 preview 12345","barWidth":0.3,"rows":10}]}`)
	img, w := render(t, l, &preview.Options{DPI: 254})
	if len(w) != 1 || w[0].Path != "objs[0].rows" {
		t.Errorf("warnings: %v", w)
	}
	start, stop := []int{8, 1, 1, 1, 1, 1, 1, 3}, []int{7, 1, 1, 3, 1, 1, 1, 2, 1}
	rows := 0
	for y := 50; y < 400; y++ {
		// Runs of bars and spaces from the first bar to the last.
		var runs []int
		first, last := span(img, y, false)
		if first >= 0 {
			prev, n := true, 0
			for x := first; x <= last+1; x++ {
				if d := dark(img, x, y); d != prev {
					runs = append(runs, n)
					prev, n = d, 0
				}
				n++
			}
		}
		if len(runs) == 0 {
			if rows > 0 {
				break
			}
			continue
		}
		if (y-50)%9 == 4 { // the middle of a row: 3 modules of 3 px
			rows++
			if !hasModules(runs[:8], start, 3) || !hasModules(runs[len(runs)-9:], stop, 3) {
				t.Fatalf("row at y=%d: runs %v", y, runs)
			}
		}
	}
	if rows < 3 {
		t.Errorf("%d rows", rows)
	}
}

func hasModules(runs, want []int, mod int) bool {
	for i := range want {
		if runs[i] != want[i]*mod {
			return false
		}
	}
	return true
}

// TestITFBearerBars: bearer bars of hBearerBar and vBearerBar times barWidth frame the symbol
// and its quiet zones.
func TestITFBearerBars(t *testing.T) {
	l := parse(t, `{"format":3,"width":80,"height":40,"objs":[{"type":"ITF","x":10,"y":10,"text":"1234","barHeight":10,"barWidth":0.3,"hBearerBar":2,"vBearerBar":2}]}`)
	img, w := render(t, l, &preview.Options{DPI: 254})
	if len(w) != 0 {
		t.Error(w)
	}
	// Symbol 100..100+width, quiet zones of 10 modules (30 px), bearers 6 px.
	first, last := span(img, 100-3, false) // inside the top bearer
	sym0, sym1 := span(img, 150, false)    // the symbol's middle row, bearers included
	if first != 100-30-6 || first != sym0 || last != sym1 {
		t.Errorf("top bearer %d..%d, middle row %d..%d, want both from %d", first, last, sym0, sym1, 100-30-6)
	}
	if top, bottom := span(img, first+2, true); top != 100-6 || bottom != 200+6-1 {
		t.Errorf("vertical bearer rows %d..%d, want %d..%d", top, bottom, 94, 205)
	}
	for x := sym0 + 6; x < 100; x++ {
		if dark(img, x, 150) {
			t.Fatalf("quiet zone dark at x=%d", x)
		}
	}
}
