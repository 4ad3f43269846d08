package preview_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbdatamatrix "github.com/boombuler/barcode/datamatrix"
	"github.com/labelprinter/go-labelprinter/label/preview"
)

// python is Debian's interpreter, the one python3-zxing-cpp installs its module for (another
// python3 on PATH would not have it).
const python = "/usr/bin/python3"

// zxingCpp returns the reader script when Debian's zxing-cpp binding can be imported; it
// skips the test otherwise, or fails it when LABELPRINTER_REQUIRE_ZXINGCPP=1.
func zxingCpp(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(python, "-c", "import numpy, zxingcpp").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("zxing-cpp cannot be used from %s (%v)", python, err)
		if o := bytes.TrimSpace(out); len(o) > 0 {
			msg = fmt.Sprintf("zxing-cpp cannot be used from %s (%s)", python, o[bytes.LastIndexByte(o, '\n')+1:])
		}
		if os.Getenv("LABELPRINTER_REQUIRE_ZXINGCPP") == "1" {
			t.Fatal(msg + " and LABELPRINTER_REQUIRE_ZXINGCPP=1")
		}
		t.Skip(msg + ": apt-get install python3-zxing-cpp to check the barcodes with zxing-cpp's readers")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "zxing_read.py"))
	if err != nil {
		t.Fatal(err)
	}
	return script
}

// zxSymbol is a symbol as testdata/zxing_read.py prints it.
type zxSymbol struct {
	Format string `json:"format"`
	Text   string `json:"text"`
	Bytes  string `json:"bytes"` // hex
	SymID  string `json:"symbologyIdentifier"`
	Type   string `json:"contentType"`
	Valid  bool   `json:"valid"`
}

// zxingRead reads the symbols of each PNG file with zxing-cpp, in one run of the script.
func zxingRead(t *testing.T, script string, files []string) map[string][]zxSymbol {
	t.Helper()
	cmd := exec.Command(python, append([]string{script}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zxing_read.py: %v\n%s", err, stderr.Bytes())
	}
	var res map[string][]zxSymbol
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("zxing_read.py's JSON: %v\n%s", err, out)
	}
	return res
}

// zxCase is a barcode object and what zxing-cpp must read from its preview.
type zxCase struct {
	name   string
	obj    string
	format string // zxing-cpp's format name
	want   string // the data, GS (0x1D) between GS1 elements
	symID  string // the symbology identifier
	width  int    // the label's size in mm, 100 x 60 when 0
	height int
	warns  int
	// iso144 marks a 144 x 144 Data Matrix: its error correction codewords are interleaved
	// as ISO/IEC 16022 says (from the first block), which zxing-cpp before 2.0 (Debian 12
	// has 1.4) does not read: it reads only the order of some other encoders, which start
	// at the ninth block. libdmtx (TestDataMatrix144) reads it.
	iso144 bool
}

// zxSymbolID is the symbology identifier (ISO/IEC 15424) each zbarimg-free case must have.
var zxSymbolID = map[string]string{"Code128": "]C0", "Code128C": "]C0", "GS1-128": "]C1",
	"Code39": "]A0", "Code39ratio3": "]A0", "ITF": "]I0", "EAN-13": "]E0", "EAN-13 wrong check digit": "]E0",
	"UPC-A": "]E0"}

// zxMisreads are symbolCases Debian 12's zxing-cpp (1.4) reads wrong: a "%%" of a GS1 QR
// Code's alphanumeric mode (a "%" of the data) ends its reading there, in bwip-js's symbol of
// the same data as in the preview's. zbarimg, gozxing and bwip-js judge them.
var zxMisreads = map[string]bool{"GS1-QRCode percent": true, "GS1-QRCode percent separator": true,
	"GS1-QRCode-Plain percent": true}

var zxFormat = map[string]string{"Code128": "Code128", "GS1-128": "Code128", "Code39": "Code39",
	"ITF": "ITF", "EAN-13": "EAN13", "UPC-A": "UPCA", "DataMatrix": "DataMatrix",
	"GS1-DataMatrix": "DataMatrix", "GS1-DataMatrix-Plain": "DataMatrix", "GS1-QRCode": "QRCode",
	"GS1-QRCode-Plain": "QRCode", "PDF417": "PDF417"}

// zxCases are symbolCases (read by gozxing too) and the symbols only zxing-cpp reads: PDF417
// with the options its encoder supports, every square Data Matrix size up to 144 x 144, and
// rectangular ones.
func zxCases(t *testing.T) []zxCase {
	var cs []zxCase
	for _, s := range symbolCases {
		if zxMisreads[s.name] {
			continue
		}
		var typ struct{ Type string }
		if err := json.Unmarshal([]byte(s.obj), &typ); err != nil {
			t.Fatal(err)
		}
		id := s.symID
		if v, ok := zxSymbolID[s.name]; ok {
			id = v
		}
		want := s.want
		if s.zbarWant != "" { // zxing-cpp, as zbarimg, gives Code 39's check character
			want = s.zbarWant
		}
		cs = append(cs, zxCase{name: s.name, obj: s.obj, format: zxFormat[typ.Type], want: want, symID: id, warns: s.warns})
	}
	long := strings.Repeat("PDF417 preview, every row read back 0123456789. ", 8)
	cs = append(cs,
		// Data of 2 rows in the original encoder (now 3, the least a reader takes), and
		// row counts not multiples of 3 (17 and 8 rows: the left row indicator).
		zxCase{name: "PDF417 short", obj: `{"type":"PDF417","text":"ABC","barWidth":0.3,"errorCorrection":0}`,
			format: "PDF417", want: "ABC", symID: "]L2"},
		zxCase{name: "PDF417 17 rows", obj: `{"type":"PDF417","text":"A1","barWidth":0.3,"errorCorrection":5}`,
			format: "PDF417", want: "A1", symID: "]L2"},
		zxCase{name: "PDF417 8 rows", obj: `{"type":"PDF417","text":"abcdefghijklmnopqrstuvwxyz","barWidth":0.3}`,
			format: "PDF417", want: "abcdefghijklmnopqrstuvwxyz", symID: "]L2"},
		zxCase{name: "PDF417", obj: `{"type":"PDF417","text":"PDF417 preview 12345","barWidth":0.3}`,
			format: "PDF417", want: "PDF417 preview 12345", symID: "]L2"},
		zxCase{name: "PDF417 errorCorrection 5 rowHeight", obj: `{"type":"PDF417","text":"Lot 42, 2027-01-01","barWidth":0.3,"rowHeight":1.5,"errorCorrection":5}`,
			format: "PDF417", want: "Lot 42, 2027-01-01", symID: "]L2"},
		zxCase{name: "PDF417 long, colour, extra quiet zone", obj: `{"type":"PDF417","text":"` + long + `","barWidth":0.25,"barColor":"#000080","extraQuietZone":2}`,
			format: "PDF417", want: long, symID: "]L2", width: 150, height: 100},
		zxCase{name: "PDF417 digits", obj: `{"type":"PDF417","text":"00123456789012345678901234567890","barWidth":0.3,"errorCorrection":0}`,
			format: "PDF417", want: "00123456789012345678901234567890", symID: "]L2"},
	)
	for _, s := range []int{10, 12, 14, 16, 18, 20, 22, 24, 26, 32, 36, 40, 44, 48, 52, 64, 72, 80, 88, 96, 104, 120, 132, 144} {
		text := fmt.Sprintf("Data Matrix %d x %d", s, s)
		text = text[:min(len(text), s/2-2)] // 3 characters in the smallest
		cs = append(cs, zxCase{name: fmt.Sprintf("DataMatrix %dx%d", s, s),
			obj:    fmt.Sprintf(`{"type":"DataMatrix","text":%q,"moduleSize":0.3,"size":{"width":%d,"height":%d}}`, text, s, s),
			format: "DataMatrix", want: text, symID: "]d1", iso144: s == 144})
	}
	cs = append(cs, zxCase{name: "DataMatrix size too small", obj: `{"type":"DataMatrix","text":"Hello DataMatrix","moduleSize":0.5,"size":{"width":10,"height":10}}`,
		format: "DataMatrix", want: "Hello DataMatrix", symID: "]d1", warns: 1})
	for _, s := range [][2]int{{18, 8}, {32, 8}, {26, 12}, {36, 12}, {36, 16}, {48, 16}} {
		cs = append(cs, zxCase{name: fmt.Sprintf("DataMatrix %dx%d", s[0], s[1]),
			obj:    fmt.Sprintf(`{"type":"DataMatrix","text":"R%d","moduleSize":0.4,"size":{"width":%d,"height":%d}}`, s[0]*s[1], s[0], s[1]),
			format: "DataMatrix", want: fmt.Sprintf("R%d", s[0]*s[1]), symID: "]d1"})
	}
	// Full symbols: the largest holds 1558 data codewords in 10 interleaved blocks.
	digits := strings.Repeat("0123456789", 300)
	text := strings.Repeat("Every codeword of the largest Data Matrix. ", 30)
	gs1 := strings.Repeat("A1B2C3D4E5", 7)
	cs = append(cs,
		zxCase{name: "DataMatrix 144x144 full of digits", obj: `{"type":"DataMatrix","text":"` + digits + `","moduleSize":0.3}`,
			format: "DataMatrix", want: digits, symID: "]d1", iso144: true},
		zxCase{name: "DataMatrix large text", obj: `{"type":"DataMatrix","text":"` + text + `","moduleSize":0.3}`,
			format: "DataMatrix", want: text, symID: "]d1"},
		zxCase{name: "GS1-DataMatrix 144x144", obj: `{"type":"GS1-DataMatrix","apps":[{"id":"01","value":"09501101530003"},{"id":"91","value":"` + gs1 + `"},{"id":"10","value":"LOT42"}],"moduleSize":0.3,"size":{"width":144,"height":144}}`,
			format: "DataMatrix", want: "0109501101530003" + "91" + gs1 + "\x1d" + "10LOT42", symID: "]d2", iso144: true},
		zxCase{name: "GS1-DataMatrix 64x64", obj: `{"type":"GS1-DataMatrix","apps":[{"id":"10","value":"LOT42"},{"id":"21","value":"S9"}],"moduleSize":0.4,"size":{"width":64,"height":64}}`,
			format: "DataMatrix", want: "10LOT42\x1d21S9", symID: "]d2"},
	)
	return cs
}

// casePNG writes the preview of a case's object, centred on its label, as a PNG, and checks
// the number of warnings.
func casePNG(t *testing.T, dir string, i int, tc zxCase) string {
	t.Helper()
	w, h := tc.width, tc.height
	if w == 0 {
		w, h = 100, 60
	}
	l := parse(t, fmt.Sprintf(`{"format":3,"width":%d,"height":%d,"objs":[%s]}`, w, h,
		strings.Replace(tc.obj, `{"type"`, fmt.Sprintf(`{"x":%d,"y":%d,"hAnchor":"CENTER","vAnchor":"CENTER","type"`, w/2, h/2), 1)))
	img, warns, err := preview.Render(l, nil)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	if len(warns) != tc.warns {
		t.Errorf("%s: warnings %v", tc.name, warns)
	}
	// Written in grey without compression (preview.PNG compresses, and TestBarcodesZbarimg
	// reads its bytes): the rows are then unfiltered, which the script reads at numpy's
	// speed (a Paeth row costs it a Python loop over every byte).
	grey := image.NewGray(img.Bounds())
	draw.Draw(grey, grey.Bounds(), img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&out, grey); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, fmt.Sprintf("%02d.png", i))
	if err := os.WriteFile(f, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBarcodesZXingCpp: zxing-cpp (Debian's python3-zxing-cpp), a reader independent of every
// encoder the preview uses, reads every barcode type the preview draws from the PNG it writes,
// to the object's data, with the symbology identifier that says GS1 for GS1 symbols (]C1,
// ]d2, ]Q3) and GS between variable-length elements: PDF417, which neither gozxing nor
// Debian's zbar reads, and Data Matrix of every size up to 132 x 132 and rectangular
// (144 x 144: TestDataMatrix144).
func TestBarcodesZXingCpp(t *testing.T) {
	script := zxingCpp(t)
	dir := t.TempDir()
	var cases []zxCase
	var files []string
	for _, tc := range zxCases(t) {
		if !tc.iso144 {
			files = append(files, casePNG(t, dir, len(cases), tc))
			cases = append(cases, tc)
		}
	}
	res := zxingRead(t, script, files)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			syms := res[files[i]]
			if len(syms) != 1 {
				t.Fatalf("zxing-cpp read %d symbols: %+v", len(syms), syms)
			}
			s := syms[0]
			raw, err := hex.DecodeString(s.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if s.Format != tc.format || s.SymID != tc.symID || !s.Valid {
				t.Errorf("format %s, identifier %s, valid %v; want %s, %s", s.Format, s.SymID, s.Valid, tc.format, tc.symID)
			}
			if s.Text != tc.want {
				t.Errorf("read %q, want %q", s.Text, tc.want)
			}
			if string(raw) != tc.want {
				t.Errorf("bytes %q, want %q", raw, tc.want)
			}
			if gs1 := tc.symID == "]C1" || tc.symID == "]d2" || tc.symID == "]Q3"; gs1 != (s.Type == "GS1") {
				t.Errorf("content type %s for identifier %s", s.Type, tc.symID)
			}
		})
	}
}

// dmtxread returns Debian's libdmtx reader (package dmtx-utils); it skips the test when it
// is missing, or fails it when LABELPRINTER_REQUIRE_DMTXREAD=1.
func dmtxread(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("dmtxread")
	if err != nil {
		if os.Getenv("LABELPRINTER_REQUIRE_DMTXREAD") == "1" {
			t.Fatal("dmtxread not found and LABELPRINTER_REQUIRE_DMTXREAD=1")
		}
		t.Skip("dmtxread not found: apt-get install dmtx-utils to check 144 x 144 Data Matrix with libdmtx")
	}
	return p
}

// TestDataMatrix144: the largest Data Matrix, whose ten blocks are interleaved in an order
// readers disagree on. libdmtx reads the preview's to the data, as a 144 x 144 symbol, with no
// error to correct (-C0), GS1 with FNC1 first and as separator; and its modules are those
// of boombuler's encoder (an encoder the preview does not use for Data Matrix) for the same
// digits.
func TestDataMatrix144(t *testing.T) {
	bin := dmtxread(t)
	dir := t.TempDir()
	n := 0
	for i, tc := range zxCases(t) {
		if !tc.iso144 {
			continue
		}
		n++
		t.Run(tc.name, func(t *testing.T) {
			f := casePNG(t, dir, i, tc)
			args := []string{"-N1", "-C0", "-s", "144x144", "-m", "60000"}
			want := tc.want
			if tc.symID == "]d2" {
				args = append(args, "-G29") // FNC1 as GS
				want = "\x1d" + want
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, append(args, f)...).Output()
			if err != nil {
				t.Fatalf("dmtxread: %v (%q)", err, out)
			}
			if string(out) != want {
				t.Errorf("read %q, want %q", out, want)
			}
		})
	}
	if n != 3 {
		t.Errorf("%d cases of 144 x 144", n)
	}

	digits := strings.Repeat("0123456789", 300)
	bb, err := bbdatamatrix.Encode(digits)
	if err != nil {
		t.Fatal(err)
	}
	if b := bb.Bounds(); b.Dx() != 144 || b.Dy() != 144 {
		t.Fatalf("boombuler's symbol is %v", b)
	}
	// 0.4 mm modules at 254 dpi: 4 pixels a module, the symbol from 40 - 28.8 mm.
	l := parse(t, `{"format":3,"width":80,"height":80,"objs":[{"type":"DataMatrix","x":11.2,"y":11.2,"text":"`+digits+`","moduleSize":0.4}]}`)
	img, w := render(t, l, &preview.Options{DPI: 254})
	if len(w) != 0 {
		t.Fatal(w)
	}
	diff := 0
	for y := 0; y < 144; y++ {
		for x := 0; x < 144; x++ {
			c := color.GrayModel.Convert(bb.At(x, y)).(color.Gray)
			if dark(img, 112+4*x+2, 112+4*y+2) != (c.Y < 128) {
				diff++
			}
		}
	}
	if diff != 0 {
		t.Errorf("%d of 144 x 144 modules differ from boombuler's", diff)
	}
}
