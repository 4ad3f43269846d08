package pictures_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

const rowLabel = `{"format":3,"width":50,"height":20,"objs":[
	{"type":"Text","x":2,"y":2,"text":"{{Name}} {YEAR}","font":{"family":"Go","style":"Regular","height":5},"color":"black"},
	{"type":"Rect","x":0,"y":15,"width":50,"height":1,"fillColor":"black"}]}`

// TestDrawThroughThePage: the page's picture of each print is the preview of the label with
// that print's row and time, at the label's size in millimetres and its resolution.
func TestDrawThroughThePage(t *testing.T) {
	at := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw), printersim.WithClock(fixedClock(at)))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() { client.CloseIdleConnections(); srv.Close() })
	do := func(method, path, body string, want int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	do("PUT", "/api/v3/labels/L", rowLabel, 204)
	do("PUT", "/api/v3/labels/H", `{"format":3,"width":40,"height":10,"hdpi":600,"vdpi":200,"objs":[]}`, 204)
	do("PUT", "/api/v3/tables/T", `{"columns":["SKU","Name"],"rows":[["A1","Bolt"],["B2","Nut"]]}`, 204)
	do("POST", "/api/v3/printers/line1/printJob", `{"labelName":"L","tableName":"T"}`, 200)
	do("POST", "/api/v3/printers/line1/trigger", "", 200)
	do("POST", "/api/v3/printers/line1/trigger", "", 200)
	do("POST", "/api/v3/printers/line1/printJob", `{"labelName":"H"}`, 200)
	do("POST", "/api/v3/printers/line1/trigger", "", 200)

	l, err := label.Parse([]byte(rowLabel))
	if err != nil {
		t.Fatal(err)
	}
	for n, name := range map[string]string{"1": "Bolt", "2": "Nut"} {
		got, err := png.Decode(bytes.NewReader(do("GET", "/ui/printers/line1/prints/"+n+".png", "", 200)))
		if err != nil {
			t.Fatal(err)
		}
		// 50 x 20 mm at 300 dpi.
		if b := got.Bounds(); b.Dx() != 591 || b.Dy() != 236 {
			t.Errorf("picture %s is %v, want 591 x 236", n, b)
		}
		want, _, err := preview.Render(l, &preview.Options{Env: &label.Env{Clock: func() time.Time { return at }, Row: map[string]string{"SKU": "?", "Name": name}}})
		if err != nil {
			t.Fatal(err)
		}
		if !samePixels(got, want) {
			t.Errorf("picture %s is not the label drawn with row %s at %v", n, name, at)
		}
	}
	one, _ := png.Decode(bytes.NewReader(do("GET", "/ui/printers/line1/prints/1.png", "", 200)))
	two, _ := png.Decode(bytes.NewReader(do("GET", "/ui/printers/line1/prints/2.png", "", 200)))
	if samePixels(one, two) {
		t.Error("the two rows drew the same picture")
	}
	h, err := png.Decode(bytes.NewReader(do("GET", "/ui/printers/line1/prints/3.png", "", 200)))
	if err != nil {
		t.Fatal(err)
	}
	// 40 x 10 mm at 600 x 200 dpi.
	if b := h.Bounds(); b.Dx() != 945 || b.Dy() != 79 {
		t.Errorf("picture at the label's resolution is %v, want 945 x 79", b)
	}
}

func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

// TestDrawStoredImage: a label showing an image stored on the simulator is drawn with it, as
// the same label holding the PNG in base64 is.
func TestDrawStoredImage(t *testing.T) {
	srv, err := printersim.Start(printersim.WithUI(), printersim.WithPictures(pictures.Draw))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() { client.CloseIdleConnections(); srv.Close() })
	do := func(method, path, ct string, body []byte, want int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	src := image.NewNRGBA(image.Rect(0, 0, 64, 32))
	for i := range src.Pix {
		src.Pix[i] = byte(i * 7)
	}
	var logo bytes.Buffer
	if err := png.Encode(&logo, src); err != nil {
		t.Fatal(err)
	}
	const stored = `{"format":3,"width":30,"height":20,"objs":[{"type":"StaticBitmap","x":2,"y":3,"width":20,"height":10,"bitmap":"LOGO"}]}`
	do("PUT", "/api/v3/images/LOGO", "image/png", logo.Bytes(), 204)
	do("PUT", "/api/v3/labels/S", "application/json", []byte(stored), 204)
	do("POST", "/api/v3/printers/line1/printJob", "application/json", []byte(`{"labelName":"S"}`), 200)
	do("POST", "/api/v3/printers/line1/trigger", "", nil, 200)
	got, err := png.Decode(bytes.NewReader(do("GET", "/ui/printers/line1/prints/1.png", "", nil, 200)))
	if err != nil {
		t.Fatal(err)
	}
	inline, err := label.Parse([]byte(strings.Replace(stored, "LOGO", base64.StdEncoding.EncodeToString(logo.Bytes()), 1)))
	if err != nil {
		t.Fatal(err)
	}
	want, warns, err := preview.Render(inline, nil)
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if !samePixels(got, want) {
		t.Error("the stored image is not drawn as the same PNG in base64 is")
	}
}
