package preview_test

import (
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata from the current renderer")

// exampleEnv is the clock and table row of package label's shipping and pallet examples.
var exampleEnv = &label.Env{
	Clock: func() time.Time { return time.Date(2024, 10, 4, 10, 30, 0, 0, time.UTC) },
	Row:   map[string]string{"Pallet": "P-0007"},
}

// TestGolden renders package label's shipping and pallet examples and compares them with the
// PNGs in testdata (which the label README shows), allowing a few pixels to differ (glyph
// rasterization may change with the font library); go test -run TestGolden -update rewrites
// them, and a changed golden is a reviewed change. The barcodes of each are read back.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		warns []string
		reads map[string]func() gozxing.Reader
	}{
		{"shipping", []string{
			`objs[0]: font "Arial" not given; drawn with Go Regular`,
			`objs[1]: font "Arial" not given; drawn with Go Regular`,
		}, map[string]func() gozxing.Reader{
			"9501101530003": oned.NewEAN13Reader,
			"]C1" + "0109501101530003" + "15250221" + "10LOT42": oned.NewCode128Reader,
		}},
		{"pallet", []string{`objs[0]: font "Arial" not given; drawn with Go Bold`},
			map[string]func() gozxing.Reader{"00095011010000000018" + "0209501101530003" + "3748": qrcode.NewQRCodeReader}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			img, w := render(t, parse(t, string(data)), &preview.Options{Env: exampleEnv})
			if w.String() != strings.Join(tc.warns, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", w, strings.Join(tc.warns, "\n"))
			}
			for want, reader := range tc.reads {
				bmp, _ := gozxing.NewBinaryBitmap(gozxing.NewHybridBinarizer(gozxing.NewLuminanceSourceFromImage(img)))
				res, err := reader().Decode(bmp, map[gozxing.DecodeHintType]any{
					gozxing.DecodeHintType_TRY_HARDER: true, gozxing.DecodeHintType_ASSUME_GS1: true})
				if err != nil || res.GetText() != want {
					t.Errorf("read %v %v, want %q", res, err, want)
				}
			}
			file := filepath.Join("testdata", tc.name+".png")
			if *update {
				writePNG(t, img, file)
				return
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
			}
			defer f.Close()
			golden, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			if n, total := differing(img, golden); n < 0 || n > total/1000 {
				t.Errorf("%d of %d pixels differ from %s (at most 0.1%% may); if the change is meant, rewrite it with -update and review it", n, total, file)
			}
		})
	}
}

// differing counts the pixels whose channels differ by more than 64; -1 when the sizes differ.
func differing(a *image.RGBA, b image.Image) (int, int) {
	if a.Bounds() != b.Bounds() {
		return -1, 0
	}
	n := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			c := a.RGBAAt(x, y)
			r, g, bb, _ := b.At(x, y).RGBA()
			if absDiff(int(c.R), int(r>>8)) > 64 || absDiff(int(c.G), int(g>>8)) > 64 || absDiff(int(c.B), int(bb>>8)) > 64 {
				n++
			}
		}
	}
	return n, a.Bounds().Dx() * a.Bounds().Dy()
}

func absDiff(a, b int) int { return abs(a - b) }
