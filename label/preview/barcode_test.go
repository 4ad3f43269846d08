package preview_test

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/datamatrix"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// symbolCase is one barcode object and what a scanner must read from its preview.
type symbolCase struct {
	name   string
	obj    string // the object's JSON, centred on the label
	want   string // the data, GS (0x1D) between GS1 elements
	symID  string // gozxing's symbology identifier ("" when not checked)
	reader func() gozxing.Reader
	zbar   string // zbarimg's symbol type; "" when Debian's zbar cannot read it
	// zbarWant is what zbarimg reads when it differs: it gives Code 39's check character,
	// which gozxing checks and drops.
	zbarWant string
	gs1      bool
	warns    int
}

var symbolCases = []symbolCase{
	{name: "Code128", obj: `{"type":"Code128","text":"Hello-128 x","barHeight":15,"barWidth":0.33}`,
		want: "Hello-128 x", symID: "]C0", reader: oned.NewCode128Reader, zbar: "CODE-128"},
	{name: "Code128C", obj: `{"type":"Code128","text":"12345678","barHeight":15,"barWidth":0.33,"encoding":"C"}`,
		want: "12345678", symID: "]C0", reader: oned.NewCode128Reader, zbar: "CODE-128"},
	{name: "GS1-128", obj: `{"type":"GS1-128","apps":[{"id":"01","value":"09501101530003"},{"id":"10","value":"LOT42"},{"id":"15","value":"250221"}],"barHeight":20,"barWidth":0.33}`,
		want: "0109501101530003" + "10LOT42\x1d" + "15250221", symID: "]C1", reader: oned.NewCode128Reader, zbar: "CODE-128", gs1: true},
	{name: "Code39", obj: `{"type":"Code39","text":"CODE-39 TEST","barHeight":15,"barWidth":0.3,"checkDigit":true}`,
		want: "CODE-39 TEST", zbarWant: "CODE-39 TESTY", reader: func() gozxing.Reader { return oned.NewCode39ReaderWithCheckDigitFlag(true) }, zbar: "CODE-39"},
	{name: "Code39ratio3", obj: `{"type":"Code39","text":"ABC123","barHeight":15,"barWidth":0.3,"barRatio":3}`,
		want: "ABC123", symID: "]A0", reader: oned.NewCode39Reader, zbar: "CODE-39"},
	{name: "ITF", obj: `{"type":"ITF","text":"12345678901234","barHeight":15,"barWidth":0.33,"hBearerBar":3,"vBearerBar":3}`,
		want: "12345678901234", reader: oned.NewITFReader, zbar: "I2/5"},
	{name: "EAN-13", obj: `{"type":"EAN-13","text":"950110153000","barHeight":18,"barWidth":0.33}`,
		want: "9501101530003", symID: "]E0", reader: oned.NewEAN13Reader, zbar: "EAN-13"},
	{name: "EAN-13 wrong check digit", obj: `{"type":"EAN-13","text":"9501101530004","barHeight":18,"barWidth":0.33}`,
		want: "9501101530003", symID: "]E0", reader: oned.NewEAN13Reader, zbar: "EAN-13", warns: 1},
	{name: "UPC-A", obj: `{"type":"UPC-A","text":"03600029145","barHeight":18,"barWidth":0.33}`,
		want: "036000291452", reader: oned.NewUPCAReader, zbar: "UPC-A"},
	{name: "DataMatrix", obj: `{"type":"DataMatrix","text":"Hello DataMatrix 12345","moduleSize":0.5}`,
		want: "Hello DataMatrix 12345", symID: "]d1", reader: func() gozxing.Reader { return datamatrix.NewDataMatrixReader() }},
	{name: "DataMatrix sized", obj: `{"type":"DataMatrix","text":"ABC","moduleSize":0.5,"size":{"width":24,"height":24}}`,
		want: "ABC", symID: "]d1", reader: func() gozxing.Reader { return datamatrix.NewDataMatrixReader() }},
	{name: "DataMatrix rectangular", obj: `{"type":"DataMatrix","text":"1234567890","moduleSize":0.5,"rectangular":true}`,
		want: "1234567890", symID: "]d1", reader: func() gozxing.Reader { return datamatrix.NewDataMatrixReader() }},
	{name: "GS1-DataMatrix", obj: `{"type":"GS1-DataMatrix","apps":[{"id":"01","value":"09501101530003"},{"id":"10","value":"ABC-123"},{"id":"17","value":"270101"}],"moduleSize":0.5}`,
		want: "0109501101530003" + "10ABC-123\x1d" + "17270101", symID: "]d2", reader: func() gozxing.Reader { return datamatrix.NewDataMatrixReader() }, gs1: true},
	{name: "GS1-DataMatrix sized", obj: `{"type":"GS1-DataMatrix","apps":[{"id":"01","value":"09501101530003"}],"moduleSize":0.5,"size":{"width":32,"height":32}}`,
		want: "0109501101530003", symID: "]d2", reader: func() gozxing.Reader { return datamatrix.NewDataMatrixReader() }, gs1: true},
	{name: "GS1-DataMatrix-Plain", obj: `{"type":"GS1-DataMatrix-Plain","text":"10LOT7\u001d0109501101530003","moduleSize":0.5,"rectangular":true}`,
		want: "10LOT7\x1d0109501101530003", symID: "]d2", reader: func() gozxing.Reader { return datamatrix.NewDataMatrixReader() }, gs1: true},
	{name: "GS1-QRCode", obj: `{"type":"GS1-QRCode","apps":[["00","095011010000000018"],{"id":"02","value":"09501101530003"},{"id":"37","value":"48"}],"moduleSize":0.6,"eccLevel":"M"}`,
		want: "00095011010000000018" + "0209501101530003" + "3748", symID: "]Q3", reader: qrcode.NewQRCodeReader, zbar: "QR-Code", gs1: true},
	{name: "GS1-QRCode sized", obj: `{"type":"GS1-QRCode","apps":[{"id":"10","value":"B1"},{"id":"21","value":"S9"}],"moduleSize":0.6,"size":33,"eccLevel":"H"}`,
		want: "10B1\x1d21S9", symID: "]Q3", reader: qrcode.NewQRCodeReader, zbar: "QR-Code", gs1: true},
	// In alphanumeric mode under FNC1 "%" is the separator: a "%" of the data is written "%%".
	{name: "GS1-QRCode percent", obj: `{"type":"GS1-QRCode","apps":[{"id":"01","value":"09501101530003"},{"id":"10","value":"AB%12"}],"moduleSize":0.6}`,
		want: "0109501101530003" + "10AB%12", symID: "]Q3", reader: qrcode.NewQRCodeReader, zbar: "QR-Code", gs1: true},
	{name: "GS1-QRCode percent separator", obj: `{"type":"GS1-QRCode","apps":[{"id":"10","value":"%A%"},{"id":"21","value":"%%"},{"id":"4300","value":"X%"}],"moduleSize":0.6}`,
		want: "10%A%\x1d21%%\x1d4300X%", symID: "]Q3", reader: qrcode.NewQRCodeReader, zbar: "QR-Code", gs1: true},
	{name: "GS1-QRCode-Plain percent", obj: `{"type":"GS1-QRCode-Plain","text":"10A%B\u001d0109501101530003","moduleSize":0.6}`,
		want: "10A%B\x1d0109501101530003", symID: "]Q3", reader: qrcode.NewQRCodeReader, zbar: "QR-Code", gs1: true},
	{name: "GS1-QRCode-Plain", obj: `{"type":"GS1-QRCode-Plain","text":"0109501101530003","moduleSize":0.6}`,
		want: "0109501101530003", symID: "]Q3", reader: qrcode.NewQRCodeReader, zbar: "QR-Code", gs1: true},
}

func symbolLabel(t testing.TB, obj string) *label.Label {
	return parse(t, `{"format":3,"width":100,"height":60,"objs":[`+
		strings.Replace(obj, `{"type"`, `{"x":50,"y":30,"hAnchor":"CENTER","vAnchor":"CENTER","type"`, 1)+`]}`)
}

// TestBarcodesDecode renders each barcode type and reads it back with gozxing's readers: the
// object's data, and GS1 symbols recognised as GS1 by their symbology identifier.
func TestBarcodesDecode(t *testing.T) {
	for _, tc := range symbolCases {
		t.Run(tc.name, func(t *testing.T) {
			img, w := render(t, symbolLabel(t, tc.obj), nil)
			if len(w) != tc.warns {
				t.Errorf("warnings: %v", w)
			}
			src := gozxing.NewLuminanceSourceFromImage(img)
			bmp, err := gozxing.NewBinaryBitmap(gozxing.NewHybridBinarizer(src))
			if err != nil {
				t.Fatal(err)
			}
			hints := map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true}
			if tc.gs1 {
				hints[gozxing.DecodeHintType_ASSUME_GS1] = true // Code 128's reader gives separators only then
			}
			res, err := tc.reader().Decode(bmp, hints)
			if err != nil {
				t.Fatalf("gozxing cannot read it: %v", err)
			}
			// With ASSUME_GS1, Code 128's reader writes the identifier before the data; the
			// Data Matrix reader gives the FNC1 in first position as a GS.
			got := strings.TrimPrefix(res.GetText(), "]C1")
			if tc.symID == "]d2" {
				got = strings.TrimPrefix(got, "\x1d")
			}
			if got != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			if tc.symID != "" {
				if id := res.GetResultMetadata()[gozxing.ResultMetadataType_SYMBOLOGY_IDENTIFIER]; id != tc.symID {
					t.Errorf("symbology identifier %v, want %s", id, tc.symID)
				}
			}
		})
	}
}

// TestBarcodeSizes: the module is barWidth or moduleSize in whole pixels; a DataMatrix and a
// QR Code have the size the label asks for.
func TestBarcodeSizes(t *testing.T) {
	for _, tc := range []struct {
		obj  string
		w, h int // the symbol's box in pixels at 254 dpi (10 px per mm)
	}{
		{`{"type":"GS1-QRCode","apps":[{"id":"10","value":"B1"}],"moduleSize":0.5,"size":33}`, 33 * 5, 33 * 5},
		{`{"type":"GS1-DataMatrix","apps":[{"id":"10","value":"B1"}],"moduleSize":0.5,"size":{"width":32,"height":32}}`, 32 * 5, 32 * 5},
		{`{"type":"DataMatrix","text":"A","moduleSize":0.5,"size":{"width":36,"height":16}}`, 36 * 5, 16 * 5},
		{`{"type":"EAN-13","text":"950110153000","barHeight":20,"barWidth":0.3}`, 95 * 3, 200},
		{`{"type":"ITF","text":"1234","barHeight":10,"barWidth":0.2,"barRatio":3}`, 4*2 + 2*(4*6+6*2) + 6 + 2*2, 100},
	} {
		l := symbolLabel(t, tc.obj)
		l.Objs[0].(label.Positioned).Position().X = label.Ptr(0.0) // at 0,0 the box starts at 0
		l.Objs[0].(label.Positioned).Position().Y = label.Ptr(0.0)
		l.Objs[0].(label.Positioned).Position().HAnchor = nil
		l.Objs[0].(label.Positioned).Position().VAnchor = nil
		img, w := render(t, l, &preview.Options{DPI: 254})
		// At 0, 0 the quiet zone lies outside the label, which is warned about.
		if len(w) != 1 || !strings.HasSuffix(w[0].Msg, "it would be cut") {
			t.Errorf("%s: warnings %v", tc.obj, w)
		}
		x0, x1 := span(img, 5, false)
		y0, y1 := span(img, 0, true)
		if x0 != 0 || x1 != tc.w-1 || y0 != 0 || y1 != tc.h-1 {
			t.Errorf("%s: box %d..%d x %d..%d, want 0..%d x 0..%d", tc.obj, x0, x1, y0, y1, tc.w-1, tc.h-1)
		}
	}
}

// zbarSymbol is a symbol of zbarimg --xml.
type zbarSymbol struct {
	Type      string `xml:"type,attr"`
	Modifiers string `xml:"modifiers,attr"`
	Data      struct {
		Format string `xml:"format,attr"`
		Text   string `xml:",chardata"`
	} `xml:"data"`
}

func zbarimg(t *testing.T) string {
	p, err := exec.LookPath("zbarimg")
	if err != nil {
		if os.Getenv("LABELPRINTER_REQUIRE_ZBARIMG") == "1" {
			t.Fatal("zbarimg not found and LABELPRINTER_REQUIRE_ZBARIMG=1")
		}
		t.Skip("zbarimg not found: apt-get install zbar-tools to check barcodes with an independent scanner")
	}
	return p
}

// TestBarcodesZbarimg: Debian's zbarimg, a scanner independent of the encoders, reads every
// barcode type it supports from the PNG, GS1 ones with modifiers='GS1' and GS separators.
func TestBarcodesZbarimg(t *testing.T) {
	bin := zbarimg(t)
	dir := t.TempDir()
	for _, tc := range symbolCases {
		if tc.zbar == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if _, err := preview.PNG(&b, symbolLabel(t, tc.obj), nil); err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".png")
			if err := os.WriteFile(f, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			syms := runZbar(t, bin, f, "-Supca.enable")
			if len(syms) != 1 {
				t.Fatalf("zbarimg read %d symbols: %+v", len(syms), syms)
			}
			s := syms[0]
			if s.Type != tc.zbar {
				t.Errorf("type %s, want %s", s.Type, tc.zbar)
			}
			want := tc.want
			if tc.zbarWant != "" {
				want = tc.zbarWant
			}
			if got := zbarData(t, s); got != want {
				t.Errorf("read %q, want %q", got, want)
			}
			if strings.Contains(s.Modifiers, "GS1") != tc.gs1 {
				t.Errorf("modifiers %q, GS1 want %v", s.Modifiers, tc.gs1)
			}
		})
	}
}

func runZbar(t *testing.T, bin, file string, args ...string) []zbarSymbol {
	out, err := exec.Command(bin, append([]string{"--xml", "-q"}, append(args, file)...)...).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("zbarimg: %v", err)
	}
	var doc struct {
		Sources []struct {
			Index []struct {
				Symbols []zbarSymbol `xml:"symbol"`
			} `xml:"index"`
		} `xml:"source"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("zbarimg's XML: %v\n%s", err, out)
	}
	var syms []zbarSymbol
	for _, s := range doc.Sources {
		for _, i := range s.Index {
			syms = append(syms, i.Symbols...)
		}
	}
	return syms
}

func zbarData(t *testing.T, s zbarSymbol) string {
	if s.Data.Format == "base64" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s.Data.Text))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return s.Data.Text
}

func writePNG(t *testing.T, img image.Image, path string) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestUndrawableSymbol: data a symbology cannot hold is a marked box and a warning naming why.
func TestUndrawableSymbol(t *testing.T) {
	for _, tc := range []struct{ obj, msg string }{
		{`{"type":"Code128","x":5,"y":5,"text":"Año","barHeight":10}`, `Code128 not drawn (character 'ñ' at byte 1 cannot be drawn in Code 128); drawn as a marked box`},
		{`{"type":"ITF","x":5,"y":5,"text":"123","barHeight":10}`, `ITF not drawn (ITF needs an even number of digits, not "123"); drawn as a marked box`},
		{`{"type":"Code39","x":5,"y":5,"text":"abc","barHeight":10}`, `Code39 not drawn (character 'a' at 0 is not in Code 39); drawn as a marked box`},
		// Too long for the encoder, with no code set asked for: one warning, not one about a code set.
		{`{"type":"Code128","x":5,"y":5,"text":"` + strings.Repeat("A", 100) + `","barHeight":10}`, `Code128 not drawn (WriterException: IllegalArgumentException: Contents length should be between 1 and 80 characters, but got 100); drawn as a marked box`},
		// GS1 data is ASCII: a GS1 QR Code of other bytes would announce UTF-8 (]Q4) or scan
		// as ISO/IEC 8859-1, as a GS1 Data Matrix of them is refused.
		{`{"type":"GS1-QRCode-Plain","x":5,"y":5,"text":"10\u20ac"}`, `GS1-QRCode-Plain not drawn (byte 0xe2 at 2 is not ASCII, which GS1 data is); drawn as a marked box`},
		{`{"type":"GS1-QRCode","x":5,"y":5,"apps":[{"id":"10","value":"caf\u00e9"}]}`, `GS1-QRCode not drawn (byte 0xc3 at 5 is not ASCII, which GS1 data is); drawn as a marked box`},
		{`{"type":"GS1-DataMatrix","x":5,"y":5,"apps":[{"id":"10","value":"caf\u00e9"}]}`, `GS1-DataMatrix not drawn (byte 0xc3 at 5 is not ASCII, which GS1 data is); drawn as a marked box`},
		// gozxing's encoder gives a symbol of other data for this, without an error.
		{`{"type":"DataMatrix","x":5,"y":5,"text":"` + strings.Repeat("A", 3000) + `"}`, `DataMatrix not drawn (3000 bytes of data do not fit any Data Matrix); drawn as a marked box`},
	} {
		img, w := render(t, parse(t, `{"format":3,"width":40,"height":30,"objs":[`+tc.obj+`]}`), &preview.Options{DPI: 254})
		if len(w) != 1 || w[0].String() != "objs[0]: "+tc.msg {
			t.Errorf("%s: %v", tc.obj, w)
		}
		if img.RGBAAt(50, 50) != (color.RGBA{255, 0, 255, 255}) { // the box's corner at x, y
			t.Errorf("%s: no marked box at its place", tc.obj)
		}
	}
}
