package preview_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
)

func parse(t testing.TB, s string) *label.Label {
	t.Helper()
	l, err := label.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func render(t testing.TB, l *label.Label, opts *preview.Options) (*image.RGBA, preview.Warnings) {
	t.Helper()
	img, w, err := preview.Render(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	return img, w
}

func dark(img *image.RGBA, x, y int) bool {
	c := img.RGBAAt(x, y)
	return int(c.R)+int(c.G)+int(c.B) < 3*128
}

// span returns the first and last dark pixel along row y (or column x when col is true).
func span(img *image.RGBA, at int, col bool) (int, int) {
	first, last := -1, -1
	n := img.Bounds().Dx()
	if col {
		n = img.Bounds().Dy()
	}
	for i := 0; i < n; i++ {
		x, y := i, at
		if col {
			x, y = at, i
		}
		if dark(img, x, y) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last
}

func TestGeometry300(t *testing.T) {
	l := parse(t, `{"format":3,"width":50,"height":30,"objs":[
		{"type":"Rect","x":10,"y":0,"width":20,"height":20,"fillColor":"black"}]}`)
	l.Objs[0].(*label.Rect).Y = label.Ptr(10.0)
	l.Height = label.Ptr(40.0)
	img, w := render(t, l, nil)
	if len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	if b := img.Bounds(); b.Dx() != 591 || b.Dy() != 472 {
		t.Fatalf("50 x 40 mm at 300 dpi is %v, want 591 x 472", b.Size())
	}
	for _, col := range []bool{false, true} {
		first, last := span(img, 200, col)
		if abs(first-118) > 1 || abs(last-354) > 1 {
			t.Errorf("20 mm square at 10 mm covers %d..%d (column %v), want 118..354 ±1", first, last, col)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestLabelSize(t *testing.T) {
	l := parse(t, `{"format":3,"width":50,"height":30,"objs":[]}`)
	img, _ := render(t, l, nil)
	if b := img.Bounds(); b.Dx() != 591 || b.Dy() != 354 {
		t.Fatalf("50 x 30 mm at 300 dpi is %v, want 591 x 354", b.Size())
	}
}

// TestScales: at 203 and 600 dpi the image and a rectangle's edges are mm x dpi / 25.4,
// rounded, exactly; the label's hdpi and vdpi are the default, Options.DPI wins.
func TestScales(t *testing.T) {
	for _, tc := range []struct {
		json string
		opts *preview.Options
		dx   float64
		dy   float64
	}{
		{`{"format":3,"width":50,"height":30,"objs":[]}`, &preview.Options{DPI: 203}, 203, 203},
		{`{"format":3,"width":50,"height":30,"objs":[]}`, &preview.Options{DPI: 600}, 600, 600},
		{`{"format":3,"width":50,"height":30,"hdpi":203,"vdpi":600,"objs":[]}`, nil, 203, 600},
		{`{"format":3,"width":50,"height":30,"hdpi":203,"objs":[]}`, &preview.Options{DPI: 600}, 600, 600},
	} {
		l := parse(t, tc.json)
		l.Objs = []label.Object{&label.Rect{Anchor: label.Anchor{X: label.Ptr(10.0), Y: label.Ptr(5.0)},
			Width: label.Ptr(20.0), Height: label.Ptr(20.0), FillColor: label.Ptr("black")}}
		img, _ := render(t, l, tc.opts)
		r := func(mm, dpi float64) int { return int(math.Round(mm * dpi / 25.4)) }
		if b := img.Bounds(); b.Dx() != r(50, tc.dx) || b.Dy() != r(30, tc.dy) {
			t.Errorf("%s: %v, want %d x %d", tc.json, b.Size(), r(50, tc.dx), r(30, tc.dy))
		}
		first, last := span(img, r(15, tc.dy), false)
		if first != r(10, tc.dx) || last != r(30, tc.dx)-1 {
			t.Errorf("%s: rectangle columns %d..%d, want %d..%d", tc.json, first, last, r(10, tc.dx), r(30, tc.dx)-1)
		}
		first, last = span(img, r(20, tc.dx), true)
		if first != r(5, tc.dy) || last != r(25, tc.dy)-1 {
			t.Errorf("%s: rectangle rows %d..%d, want %d..%d", tc.json, first, last, r(5, tc.dy), r(25, tc.dy)-1)
		}
	}
}

func TestAnchorsGroupsColours(t *testing.T) {
	l := parse(t, `{"format":3,"width":40,"height":40,"bgColor":"rgb(100%,100%,0%)","objs":[
		{"type":"ObjectGroup","children":[
			{"type":"Rect","x":20,"y":20,"hAnchor":"CENTER","vAnchor":"CENTER","width":10,"height":10,"fillColor":"red"},
			{"type":"Rect","x":40,"y":40,"hAnchor":"RIGHT","vAnchor":"BOTTOM","width":5,"height":5,"fillColor":"#0000ff"}]}]}`)
	img, w := render(t, l, &preview.Options{DPI: 254}) // 10 px per mm
	if len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	for _, tc := range []struct {
		x, y int
		want color.RGBA
	}{
		{5, 5, color.RGBA{255, 255, 0, 255}},
		{150, 150, color.RGBA{255, 0, 0, 255}}, {249, 249, color.RGBA{255, 0, 0, 255}},
		{149, 149, color.RGBA{255, 255, 0, 255}}, {250, 250, color.RGBA{255, 255, 0, 255}},
		{350, 350, color.RGBA{0, 0, 255, 255}}, {399, 399, color.RGBA{0, 0, 255, 255}},
		{349, 349, color.RGBA{255, 255, 0, 255}},
	} {
		if got := img.RGBAAt(tc.x, tc.y); got != tc.want {
			t.Errorf("pixel %d,%d is %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}

func TestRotation(t *testing.T) {
	base := `{"format":3,"width":30,"height":20,%s"objs":[
		{"type":"Rect","x":0,"y":0,"width":5,"height":5,"fillColor":"black"}]}`
	for _, tc := range []struct {
		rot        string
		w, h, x, y int // size and where the black corner lands
	}{
		{``, 300, 200, 0, 0},
		{`"rotation":"CW90",`, 200, 300, 199, 0},
		{`"rotation":"CW180",`, 300, 200, 299, 199},
		{`"rotation":"CCW90",`, 200, 300, 0, 299},
	} {
		img, _ := render(t, parse(t, strings.Replace(base, "%s", tc.rot, 1)), &preview.Options{DPI: 254})
		if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h || !dark(img, tc.x, tc.y) {
			t.Errorf("%s: %v, corner %d,%d dark %v", tc.rot, b.Size(), tc.x, tc.y, dark(img, tc.x, tc.y))
		}
	}
}

func TestPixelCap(t *testing.T) {
	l := parse(t, `{"format":3,"width":10000,"height":10000,"objs":[]}`)
	_, _, err := preview.Render(l, &preview.Options{DPI: 1200})
	if !errors.Is(err, preview.ErrTooLarge) || !strings.Contains(err.Error(), "472441 x 472441 pixels") {
		t.Fatalf("10 m x 10 m at 1200 dpi: %v", err)
	}
	_, _, err = preview.Render(parse(t, `{"format":3,"width":50,"height":30,"objs":[]}`), &preview.Options{MaxPixels: 1000})
	if !errors.Is(err, preview.ErrTooLarge) {
		t.Fatalf("cap of 1000 pixels: %v", err)
	}
	for _, s := range []string{`{"format":3,"width":0,"height":30,"objs":[]}`, `{"format":3,"objs":[]}`} {
		if _, _, err := preview.Render(parse(t, s), nil); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
	// Under a pixel: refused, not a 1 x 1 image whose warnings speak of a 25 m label.
	_, _, err = preview.Render(parse(t, `{"format":3,"width":100,"height":150,"objs":[]}`), &preview.Options{DPI: 0.001})
	if err == nil || !strings.Contains(err.Error(), "100 x 150 mm at 0.001 x 0.001 dpi is 0 x 0 pixels") {
		t.Errorf("100 x 150 mm at 0.001 dpi: %v", err)
	}
}

func TestUnknownIsMarkedAndWarned(t *testing.T) {
	l := parse(t, `{"format":3,"width":40,"height":40,"objs":[
		{"type":"Rect","x":0,"y":0,"width":1,"height":1},
		{"type":"Ellipse","x":10,"y":10,"width":20,"height":10},
		{"type":"Line"},
		{"type":"Rect","x":0,"y":0,"width":1,"height":1,"lineWidth":2},
		{"type":"Rect","x":0,"y":0,"width":1,"height":1,"fillColor":5}],"rotation":90}`)
	img, w := render(t, l, &preview.Options{DPI: 254})
	want := []string{
		`rotation: property of the wrong shape; ignored (labelctl labels lint says what it must be)`,
		`objs[1]: object type "Ellipse" not known to the preview; drawn as a marked box`,
		`objs[2]: object type "Line" not known to the preview and without x, y, width and height; not drawn`,
		`objs[3].lineWidth: property not known to the preview; ignored`,
		// A known property of the wrong shape is said to be that, not unknown.
		`objs[4].fillColor: property of the wrong shape; ignored (labelctl labels lint says what it must be)`,
	}
	if w.String() != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", w, strings.Join(want, "\n"))
	}
	if c := img.RGBAAt(100, 100); c != (color.RGBA{255, 0, 255, 255}) {
		t.Errorf("marked box corner is %v", c)
	}
	if c := img.RGBAAt(5, 5); c != (color.RGBA{0, 0, 0, 255}) { // a Rect without fillColor
		t.Errorf("a Rect without fillColor is %v, want black", c)
	}
}

func TestPolyLineDashes(t *testing.T) {
	l := parse(t, `{"format":3,"width":40,"height":20,"objs":[
		{"type":"PolyLine","points":[0,5,40,5],"lineWidth":1},
		{"type":"PolyLine","points":[0,15,40,15],"lineWidth":1,"segments":[2,2],"color":"blue"}]}`)
	img, w := render(t, l, &preview.Options{DPI: 254})
	if len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	for x := 0; x < 400; x++ {
		if !dark(img, x, 50) {
			t.Fatalf("solid line has a gap at x=%d", x)
		}
		if dark(img, x, 44) || dark(img, x, 56) {
			t.Fatalf("1 mm line is thicker than 1 mm at x=%d", x)
		}
		// Dashes of 2 mm (20 px) every 4 mm; away from the ends of each dash.
		if x%40 == 10 && img.RGBAAt(x, 150) != (color.RGBA{0, 0, 255, 255}) {
			t.Errorf("dash missing at x=%d: %v", x, img.RGBAAt(x, 150))
		}
		if x%40 == 30 && img.RGBAAt(x, 150) != (color.RGBA{255, 255, 255, 255}) {
			t.Errorf("gap missing at x=%d: %v", x, img.RGBAAt(x, 150))
		}
	}
}

func pngBase64(t testing.TB, img image.Image) string {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func checker() *image.Gray {
	g := image.NewGray(image.Rect(0, 0, 2, 2))
	g.Pix = []byte{0, 255, 255, 0}
	return g
}

func TestStaticBitmap(t *testing.T) {
	l := &label.Label{Format: label.Ptr(3), Width: label.Ptr(20.0), Height: label.Ptr(10.0), Objs: []label.Object{
		&label.StaticBitmap{Anchor: label.Anchor{X: label.Ptr(0.0), Y: label.Ptr(0.0)}, Bitmap: label.Ptr(pngBase64(t, checker())),
			Width: label.Ptr(4.0), Height: label.Ptr(4.0)},
		&label.StaticBitmap{Anchor: label.Anchor{X: label.Ptr(5.0), Y: label.Ptr(0.0)}, Bitmap: label.Ptr(pngBase64(t, checker())),
			Width: label.Ptr(4.0), Height: label.Ptr(4.0), FgColor: label.Ptr("red"), BgColor: label.Ptr("blue")},
		&label.StaticBitmap{Anchor: label.Anchor{X: label.Ptr(10.0), Y: label.Ptr(0.0)}, Bitmap: label.Ptr("LOGO"),
			Width: label.Ptr(4.0), Height: label.Ptr(4.0)},
		&label.StaticBitmap{Anchor: label.Anchor{X: label.Ptr(15.0), Y: label.Ptr(0.0)}, Bitmap: label.Ptr("MISSING"),
			Width: label.Ptr(4.0), Height: label.Ptr(4.0)},
	}}
	resolver := func(ctx context.Context, name string) ([]byte, error) {
		if name == "LOGO" {
			return base64.StdEncoding.DecodeString(pngBase64(t, checker()))
		}
		return nil, errors.New("no image " + name)
	}
	img, w := render(t, l, &preview.Options{DPI: 254, Images: resolver})
	for _, tc := range []struct {
		x, y int
		want color.RGBA
	}{
		{10, 10, color.RGBA{0, 0, 0, 255}}, {30, 10, color.RGBA{255, 255, 255, 255}},
		{60, 10, color.RGBA{255, 0, 0, 255}}, {80, 10, color.RGBA{0, 0, 255, 255}},
		{110, 10, color.RGBA{0, 0, 0, 255}}, {130, 10, color.RGBA{255, 255, 255, 255}},
		{150, 0, color.RGBA{255, 0, 255, 255}},
	} {
		if got := img.RGBAAt(tc.x, tc.y); got != tc.want {
			t.Errorf("pixel %d,%d is %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
	if len(w) != 1 || w[0].Path != "objs[3].bitmap" || !strings.Contains(w[0].Msg, `stored image "MISSING": no image MISSING`) {
		t.Errorf("warnings: %v", w)
	}
	_, w = render(t, l, &preview.Options{DPI: 254})
	if len(w) != 2 || !strings.Contains(w[0].Msg, "no image resolver") {
		t.Errorf("without a resolver: %v", w)
	}
}

func TestPNG(t *testing.T) {
	var b bytes.Buffer
	w, err := preview.PNG(&b, parse(t, `{"format":3,"width":50,"height":30,"objs":[{"type":"Box"}]}`), nil)
	if err != nil || len(w) != 1 {
		t.Fatal(err, w)
	}
	img, err := png.Decode(&b)
	if err != nil || img.Bounds().Dx() != 591 {
		t.Fatal(err, img.Bounds())
	}
}
