package preview_test

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"strings"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestImagesFrom: a StaticBitmap naming an image stored on the printer is drawn from it,
// downloaded once however often it is drawn; a name the printer does not hold is a marked
// box with the printer's answer in the warning.
func TestImagesFrom(t *testing.T) {
	ctx := context.Background()
	srv, err := printersim.Start(printersim.WithPrinters("line1"), printersim.WithProcessingDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := labelprinter.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b bytes.Buffer
	if err := png.Encode(&b, checker()); err != nil {
		t.Fatal(err)
	}
	if err := c.Images.Put(ctx, "LOGO", bytes.NewReader(b.Bytes()), "image/png", nil); err != nil {
		t.Fatal(err)
	}
	bmp := func(x float64, name string) *label.StaticBitmap {
		return &label.StaticBitmap{Anchor: label.Anchor{X: label.Ptr(x), Y: label.Ptr(0.0)}, Bitmap: label.Ptr(name),
			Width: label.Ptr(4.0), Height: label.Ptr(4.0)}
	}
	l := &label.Label{Format: label.Ptr(3), Width: label.Ptr(20.0), Height: label.Ptr(10.0),
		Objs: []label.Object{bmp(0, "LOGO"), bmp(5, "LOGO"), bmp(10, "NOPE")}}
	img, w, err := preview.RenderContext(ctx, l, &preview.Options{DPI: 254, Images: preview.ImagesFrom(c)})
	if err != nil {
		t.Fatal(err)
	}
	if img.RGBAAt(10, 10) != (color.RGBA{0, 0, 0, 255}) || img.RGBAAt(30, 10) != (color.RGBA{255, 255, 255, 255}) ||
		img.RGBAAt(60, 10) != (color.RGBA{0, 0, 0, 255}) {
		t.Error("the stored image is not drawn")
	}
	if n := srv.Sim.Requests("GET", "/api/v3/images/{name}"); n != 2 { // LOGO once, NOPE once
		t.Errorf("%d image downloads, want 2", n)
	}
	if len(w) != 1 || w[0].Path != "objs[2].bitmap" || !strings.Contains(w[0].Msg, `stored image "NOPE"`) || !strings.Contains(w[0].Msg, "404") {
		t.Errorf("warnings: %v", w)
	}
}

// TestImagesFromNilClient: a resolver made without a client gives no image, with a warning
// naming the image, instead of a panic in Render.
func TestImagesFromNilClient(t *testing.T) {
	l := parse(t, `{"format":3,"width":50,"height":30,"objs":[{"type":"StaticBitmap","x":1,"y":1,"width":10,"height":10,"bitmap":"logo.png"}]}`)
	_, w := render(t, l, &preview.Options{Images: preview.ImagesFrom(nil)})
	if len(w) != 1 || !strings.Contains(w[0].String(), `"logo.png"`) {
		t.Errorf("warnings: %v", w)
	}
}
