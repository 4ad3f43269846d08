package preview_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"runtime"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"golang.org/x/image/tiff"
)

// storedLabel is bigPNG's label with its StaticBitmap naming the stored image "BIG".
func storedLabel(t testing.TB) *label.Label {
	l, err := label.Parse([]byte(`{"format":3,"width":50,"height":30,"objs":[{"type":"StaticBitmap","x":1,"y":1,"width":20,"height":20,"bitmap":"BIG"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// resolverOf gives data as the stored image "BIG".
func resolverOf(data []byte) preview.ImageResolver {
	return func(_ context.Context, name string) ([]byte, error) {
		if name != "BIG" {
			return nil, errors.New("no image " + name)
		}
		return data, nil
	}
}

// TestStoredPNGDecodedAtPrintSize: a stored PNG of 7999 x 7999 16-bit pixels (512 MB
// decoded) in a 20 mm box costs little more than a stored PNG of 300 x 300: it is read a row
// at a time into the picture of its box, as a base64 PNG is, and drawn with the same pixels as
// the same PNG in base64.
func TestStoredPNGDecodedAtPrintSize(t *testing.T) {
	l := storedLabel(t)
	render := func(data []byte) (*image.RGBA, uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		img, warns, err := preview.Render(l, &preview.Options{DPI: 300, Images: resolverOf(data)})
		runtime.ReadMemStats(&after)
		if err != nil || len(warns) > 0 {
			t.Fatal(err, warns)
		}
		return img, after.TotalAlloc - before.TotalAlloc
	}
	side := 7999
	if raceSlowdown > 1 {
		side = 2000 // 32 MB decoded: the race detector's inflating of 512 MB takes minutes
	}
	small, big := bigPNGData(300), bigPNGData(side)
	_, a := render(small)
	stored, b := render(big)
	t.Logf("a stored PNG of 300 x 300 in %d bytes: %d bytes allocated; of %d x %[3]d in %d: %d", len(small), a, side, len(big), b)
	if b > a+4<<20 {
		t.Errorf("a stored PNG of %d x %[1]d 16-bit pixels: %d bytes allocated, %d more than one of 300 x 300; want at most 4 MiB more", side, b, b-a)
	}
	inline, err := label.Parse(bigPNG(side))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := preview.Render(inline, &preview.Options{DPI: 300})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored.Pix, want.Pix) {
		t.Error("the stored PNG is drawn otherwise than the same PNG in base64")
	}
}

// TestStoredTIFF: a stored TIFF is decoded whole and drawn scaled to its box; one over
// Options.MaxPixels is a marked box with a warning saying so, and bytes that are no image are
// one too, each naming the stored image.
func TestStoredTIFF(t *testing.T) {
	src := image.NewGray(image.Rect(0, 0, 2, 2))
	src.Pix = []byte{0, 255, 255, 0}
	var b bytes.Buffer
	if err := tiff.Encode(&b, src, nil); err != nil {
		t.Fatal(err)
	}
	l, err := label.Parse([]byte(`{"format":3,"width":20,"height":10,"objs":[{"type":"StaticBitmap","x":0,"y":0,"width":4,"height":4,"bitmap":"BIG"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	img, w, err := preview.Render(l, &preview.Options{DPI: 254, Images: resolverOf(b.Bytes())})
	if err != nil || len(w) != 0 {
		t.Fatal(err, w)
	}
	if img.RGBAAt(10, 10) != (color.RGBA{0, 0, 0, 255}) || img.RGBAAt(30, 10) != (color.RGBA{255, 255, 255, 255}) {
		t.Error("the stored TIFF is not drawn")
	}
	var large bytes.Buffer // 300 x 300 pixels, over a cap of 30,000 that the 200 x 100 label is within
	if err := tiff.Encode(&large, image.NewGray(image.Rect(0, 0, 300, 300)), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{large.Bytes(), `stored image "BIG" is larger than the pixel cap`},
		{[]byte("GIF89a not really"), `stored image "BIG" is not an image the preview can read`},
	} {
		_, w, err = preview.Render(l, &preview.Options{DPI: 254, Images: resolverOf(tc.data), MaxPixels: 30_000})
		if err != nil || len(w) != 1 || !strings.Contains(w[0].Msg, tc.want) {
			t.Errorf("%q: %v %v, want a warning saying %s", tc.data, err, w, tc.want)
		}
	}
}

// TestStoredImagesBudget: a stored PNG placed again at the same size is decoded once, and
// the stored images one render decodes total at most 4 times Options.MaxPixels: past it a
// stored image is a marked box with a warning, so that a short label naming a large stored
// image many times does not inflate it for each.
func TestStoredImagesBudget(t *testing.T) {
	data := bigPNGData(1000) // 1 megapixel
	calls := 0
	resolver := func(_ context.Context, name string) ([]byte, error) {
		calls++
		return data, nil
	}
	var objs []string
	for i := 0; i < 10; i++ { // the same size ten times: one decode
		objs = append(objs, fmt.Sprintf(`{"type":"StaticBitmap","x":%d,"y":1,"width":4,"height":4,"bitmap":"BIG"}`, 1+i*4))
	}
	for i := 0; i < 5; i++ { // five more sizes: three fit in the budget of 4 megapixels, two are marked
		objs = append(objs, fmt.Sprintf(`{"type":"StaticBitmap","x":%d,"y":10,"width":%d,"height":5,"bitmap":"BIG"}`, 1+i*8, 5+i))
	}
	l, err := label.Parse([]byte(`{"format":3,"width":50,"height":30,"objs":[` + strings.Join(objs, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	img, w, err := preview.Render(l, &preview.Options{DPI: 254, Images: resolver, MaxPixels: 1_000_000}) // 10 pixels a mm: equal boxes
	if err != nil {
		t.Fatal(err)
	}
	for y := 10; y < 50; y++ { // the first box and the tenth, 360 pixels right, drawn alike
		for x := 10; x < 50; x++ {
			if img.RGBAAt(x, y) != img.RGBAAt(x+360, y) {
				t.Fatalf("pixel %d,%d of the tenth box differs from the first's", x, y)
			}
		}
	}
	if img.RGBAAt(10, 10) == img.RGBAAt(30, 30) && img.RGBAAt(10, 10) == img.RGBAAt(49, 49) {
		t.Error("the box is drawn plain")
	}
	if calls != 6 {
		t.Errorf("the resolver was asked %d times, want 6 (once for the ten boxes of one size, once for each other size)", calls)
	}
	if len(w) != 2 || w[0].Path != "objs[13].bitmap" || w[1].Path != "objs[14].bitmap" ||
		!strings.Contains(w[0].Msg, `stored image "BIG": the stored images of this label total more than 4000000 pixels`) {
		t.Errorf("warnings: %v", w)
	}
}
