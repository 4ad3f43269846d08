package preview_test

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode/decoder"
	qrencoder "github.com/makiuchi-d/gozxing/qrcode/encoder"
	xdraw "golang.org/x/image/draw"
)

// bigLabel is the 100 x 150 mm label: 20 texts, 2 GS1 QR Codes, a GS1-128 and a
// bitmap.
func bigLabel(b testing.TB) *label.Label {
	var objs []string
	for i := 0; i < 20; i++ {
		objs = append(objs, fmt.Sprintf(`{"type":"Text","x":5,"y":%d,"text":"Line %d: ACME Foods, lot {VARIABLE;Lot}","font":{"family":"Go","style":"Regular","height":3},"color":"black"}`, 5+4*i, i))
	}
	objs = append(objs,
		`{"type":"GS1-QRCode","x":10,"y":90,"moduleSize":0.6,"apps":[["00","095011010000000018"],["02","09501101530003"],["37","48"]]}`,
		`{"type":"GS1-QRCode","x":55,"y":90,"moduleSize":0.6,"apps":[["01","09501101530003"],["10","LOT42"],["17","270101"]]}`,
		`{"type":"GS1-128","x":10,"y":125,"barHeight":15,"barWidth":0.25,"apps":[["01","09501101530003"],["10","LOT42"]]}`,
		`{"type":"StaticBitmap","x":70,"y":5,"width":25,"height":25,"bitmap":"`+pngBase64(b, logo())+`"}`)
	return parse(b, `{"format":3,"width":100,"height":150,"objs":[`+strings.Join(objs, ",")+`]}`)
}

// smallLabel is a 50 x 30 mm label: 3 texts, a GS1-128 and a GS1 Data Matrix.
func smallLabel(b testing.TB) *label.Label {
	return parse(b, `{"format":3,"width":50,"height":30,"objs":[
		{"type":"Text","x":2,"y":2,"text":"ACME Foods","font":{"family":"Go","style":"Bold","height":3},"color":"black"},
		{"type":"Text","x":2,"y":6,"text":"Lot {VARIABLE;Lot}","font":{"family":"Go","style":"Regular","height":2.5},"color":"black"},
		{"type":"Text","x":2,"y":9.5,"text":"Best before 21.02.2025","font":{"family":"Go","style":"Regular","height":2.5},"color":"black"},
		{"type":"GS1-128","x":3,"y":16,"barHeight":10,"barWidth":0.2,"apps":[["01","09501101530003"],["10","LOT42"]]},
		{"type":"GS1-DataMatrix","x":38,"y":2,"moduleSize":0.4,"apps":[["01","09501101530003"],["10","LOT42"]]}]}`)
}

func logo() image.Image {
	img := image.NewGray(image.Rect(0, 0, 64, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			if (x/8+y/8)%2 == 0 {
				img.Pix[y*64+x] = 255
			}
		}
	}
	return img
}

var benchEnv = &label.Env{Variables: map[string]string{"Lot": "LOT42"}}

// BenchmarkRender renders the labels the Performance section names at 300 dpi;
// BenchmarkHandDrawn is the limit beside it: an image/draw loop filling the same image and
// drawing the same bars, QR modules and bitmap, with every symbol encoded before the clock
// starts and no text.
func BenchmarkRender(b *testing.B) {
	for _, tc := range []struct {
		name string
		l    *label.Label
	}{{"100x150mm", bigLabel(b)}, {"50x30mm", smallLabel(b)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := preview.Render(tc.l, &preview.Options{Env: benchEnv}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
		})
	}
}

func BenchmarkHandDrawn(b *testing.B) {
	const s = 300 / 25.4
	mm := func(v float64) int { return int(v*s + 0.5) }
	var rects []image.Rectangle
	for _, q := range []struct {
		x, y    float64
		content string
	}{{10, 90, "00095011010000000018" + "0209501101530003" + "3748"}, {55, 90, "0109501101530003" + "10LOT42\x1d" + "17270101"}} {
		code, err := qrencoder.Encoder_encode(q.content, decoder.ErrorCorrectionLevel_L, map[gozxing.EncodeHintType]any{gozxing.EncodeHintType_GS1_FORMAT: true})
		if err != nil {
			b.Fatal(err)
		}
		m, mod := code.GetMatrix(), mm(0.6)
		for y := 0; y < m.GetHeight(); y++ {
			for x := 0; x < m.GetWidth(); x++ {
				if m.Get(x, y) == 1 {
					rects = append(rects, image.Rect(mm(q.x)+x*mod, mm(q.y)+y*mod, mm(q.x)+(x+1)*mod, mm(q.y)+(y+1)*mod))
				}
			}
		}
	}
	bars, err := oned.NewCode128Writer().Encode("\u00f10109501101530003"+"10LOT42", gozxing.BarcodeFormat_CODE_128, 0, 1, map[gozxing.EncodeHintType]any{gozxing.EncodeHintType_MARGIN: 0})
	if err != nil {
		b.Fatal(err)
	}
	for x := 0; x < bars.GetWidth(); x++ {
		if bars.Get(x, 0) {
			rects = append(rects, image.Rect(mm(10)+x*mm(0.25), mm(125), mm(10)+(x+1)*mm(0.25), mm(140)))
		}
	}
	bmp := logo()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		img := image.NewRGBA(image.Rect(0, 0, mm(100), mm(150)))
		draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
		black := image.NewUniform(color.Black)
		for _, r := range rects {
			draw.Draw(img, r, black, image.Point{}, draw.Src)
		}
		// The bitmap, scaled by nearest neighbour into its 25 mm box.
		xdraw.NearestNeighbor.Scale(img, image.Rect(mm(70), mm(5), mm(95), mm(30)), bmp, bmp.Bounds(), draw.Over, nil)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
}
