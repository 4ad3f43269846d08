package preview_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/datamatrix"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// bwipjsVersion is the bwip-js release the symbols are compared with (.ci/run installs it).
const bwipjsVersion = "4.11.4"

// bwipjs returns node and the directory bwip-js is installed in (LABELPRINTER_BWIPJS_DIR,
// holding node_modules/bwip-js); it skips the test when either is missing, or fails it when
// LABELPRINTER_REQUIRE_BWIPJS=1.
func bwipjs(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv("LABELPRINTER_BWIPJS_DIR")
	node, err := exec.LookPath("node")
	msg := ""
	switch {
	case err != nil:
		msg = "node not found"
	case dir == "":
		msg = "LABELPRINTER_BWIPJS_DIR not set"
	default:
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "bwip-js", "package.json"))
		var pkg struct{ Version string }
		if err == nil {
			err = json.Unmarshal(b, &pkg)
		}
		if err != nil {
			msg = fmt.Sprintf("bwip-js not found in %s (%v)", dir, err)
		} else if pkg.Version != bwipjsVersion {
			msg = fmt.Sprintf("bwip-js %s in %s, not %s", pkg.Version, dir, bwipjsVersion)
		}
	}
	if msg == "" {
		return node, dir
	}
	if os.Getenv("LABELPRINTER_REQUIRE_BWIPJS") == "1" {
		t.Fatal(msg + " and LABELPRINTER_REQUIRE_BWIPJS=1")
	}
	t.Skipf("%s: to compare the symbols with BWIPP's, install node (Debian: apt-get install nodejs npm), "+
		"run npm install --prefix DIR bwip-js@%s and set LABELPRINTER_BWIPJS_DIR=DIR", msg, bwipjsVersion)
	return "", ""
}

// bwRequest is a symbol asked of bwip-js: its encoder (BWIPP's name), its data as BWIPP
// takes it and BWIPP's options.
type bwRequest struct {
	BCID string         `json:"bcid"`
	Text string         `json:"text"`
	Opts map[string]any `json:"opts"`
}

// bwSymbol is what testdata/bwipp.js writes for a request.
type bwSymbol struct {
	SBS   []int  `json:"sbs"`  // a linear symbol's bars and spaces, in modules
	W     int    `json:"w"`    // a 2D symbol's modules
	H     int    `json:"h"`    //
	Pixs  string `json:"pixs"` // row by row, 1 dark
	Error string `json:"error"`
}

// bwipp encodes every request in one run of node.
func bwipp(t *testing.T, node, dir string, reqs []bwRequest) []bwSymbol {
	t.Helper()
	in, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "bwipp.js"), dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bwipp.js: %v\n%s", err, stderr.Bytes())
	}
	var res struct {
		Version string
		Symbols []bwSymbol
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("bwipp.js's JSON: %v", err)
	}
	if len(res.Symbols) != len(reqs) {
		t.Fatalf("bwipp.js gave %d symbols for %d requests", len(res.Symbols), len(reqs))
	}
	return res.Symbols
}

// refCase is a barcode object, the same data as BWIPP takes it, and what a scanner reads.
type refCase struct {
	name string
	obj  string // the object's JSON
	bcid string // BWIPP's encoder
	text string // BWIPP's data
	opts map[string]any
	want string // the data read, GS (0x1D) between GS1 elements
	// zbarWant is what zbarimg reads when it differs: it gives Code 39's check character.
	zbarWant string
	// alt, when set, says why the standard lets this data be encoded otherwise than BWIPP
	// does: the symbol's decoded data and symbology identifier are compared, not its modules.
	alt string
	// larger, when set, says why the preview's symbol of an alt case is larger than the
	// smallest BWIPP encodes the data in (modules across times down; PDF417 is not measured:
	// its rows and columns are each encoder's own).
	larger string
}

// Pixels per module at 254 dpi (10 pixels a mm): barWidth 0.3 and moduleSize 0.3.
const refPx = 3

// refKind says how a type's modules are compared: "2d" (a module matrix), "wn" (Code 39 and
// ITF: wide or narrow elements, the ratio being the label's), "1d" (bar widths in modules).
func refKind(typ string) string {
	switch typ {
	case "Code39", "ITF":
		return "wn"
	case "Code128", "GS1-128", "EAN-13", "UPC-A":
		return "1d"
	}
	return "2d"
}

var zbarType = map[string]string{"Code128": "CODE-128", "GS1-128": "CODE-128", "Code39": "CODE-39",
	"ITF": "I2/5", "EAN-13": "EAN-13", "UPC-A": "UPC-A", "GS1-QRCode": "QR-Code", "GS1-QRCode-Plain": "QR-Code"}

var refSymID = map[string]string{"Code128": "]C0", "GS1-128": "]C1", "Code39": "]A0", "ITF": "]I0",
	"EAN-13": "]E0", "UPC-A": "]E0", "DataMatrix": "]d1", "GS1-DataMatrix": "]d2",
	"GS1-DataMatrix-Plain": "]d2", "GS1-QRCode": "]Q3", "GS1-QRCode-Plain": "]Q3", "PDF417": "]L2"}

func refGS1(typ string) bool { return strings.HasPrefix(typ, "GS1") }

// refDrawn is a case's preview: the symbol's modules as the picture has them and the
// picture cropped around it.
type refDrawn struct {
	typ   string
	runs  []int  // linear: bar and space widths in modules (1d) or 1 narrow, 2 wide (wn)
	w, h  int    // 2D: modules
	mods  string // row by row, 1 dark
	img   *image.Gray
	warns preview.Warnings
}

// refRender draws the object alone on a label at 254 dpi and reads its modules back from the
// picture: the box of its dark pixels, refPx pixels a module.
func refRender(t *testing.T, obj string) refDrawn {
	t.Helper()
	var typ struct{ Type string }
	if err := json.Unmarshal([]byte(obj), &typ); err != nil {
		t.Fatalf("%s: %v", obj, err)
	}
	d := refDrawn{typ: typ.Type}
	// The smallest of a few labels that holds the symbol: the pixels are most of the test's
	// work under the race detector.
	sizes := [][2]int{{40, 40}, {70, 70}, {130, 130}} // PDF417 at level 8 is 118 mm wide
	if refKind(typ.Type) != "2d" {
		sizes = [][2]int{{100, 16}, {300, 16}} // Code 128 of 80 letters is 281 mm with its quiet zones
	}
	var img *image.RGBA
	for _, wh := range sizes {
		w, h := wh[0], wh[1]
		l := parse(t, fmt.Sprintf(`{"format":3,"width":%d,"height":%d,"objs":[%s]}`, w, h,
			strings.Replace(obj, `{"type"`, fmt.Sprintf(`{"x":%d,"y":%d,"hAnchor":"CENTER","vAnchor":"CENTER","type"`, w/2, h/2), 1)))
		var warns preview.Warnings
		img, warns = render(t, l, &preview.Options{DPI: 254})
		d.warns = warns
		cut := false
		for _, w := range warns {
			cut = cut || strings.HasSuffix(w.Msg, "it would be cut")
		}
		if !cut {
			break
		}
	}
	// The pixels are read at once: a call a pixel is slow under the race detector.
	b := img.Bounds()
	ink := make([]bool, b.Dx()*b.Dy()) // dark as dark() says
	box := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):]
		for x := 0; x < b.Dx(); x++ {
			if int(row[4*x])+int(row[4*x+1])+int(row[4*x+2]) < 3*128 {
				ink[(y-b.Min.Y)*b.Dx()+x] = true
				if x+b.Min.X < box.Min.X {
					box.Min.X = x + b.Min.X
				}
				if x+b.Min.X >= box.Max.X {
					box.Max.X = x + b.Min.X + 1
				}
				if y < box.Min.Y {
					box.Min.Y = y
				}
				box.Max.Y = y + 1
			}
		}
	}
	if box.Empty() {
		t.Fatalf("%s: nothing drawn", obj)
	}
	at := func(x, y int) bool { return ink[(y-b.Min.Y)*b.Dx()+x-b.Min.X] }
	// The crop keeps a quiet zone of 10 modules of the background around the box.
	crop := box.Inset(-10 * refPx).Intersect(b)
	d.img = image.NewGray(crop)
	for y := crop.Min.Y; y < crop.Max.Y; y++ {
		for x := crop.Min.X; x < crop.Max.X; x++ {
			if !at(x, y) {
				d.img.Pix[d.img.PixOffset(x, y)] = 255
			}
		}
	}
	switch refKind(typ.Type) {
	case "2d":
		my := refPx
		if typ.Type == "PDF417" {
			my = 3 * refPx // rowHeight's default, 3 modules
		}
		d.w, d.h = box.Dx()/refPx, box.Dy()/my
		var s strings.Builder
		for y := 0; y < d.h; y++ {
			for x := 0; x < d.w; x++ {
				if at(box.Min.X+x*refPx+refPx/2, box.Min.Y+y*my+my/2) {
					s.WriteByte('1')
				} else {
					s.WriteByte('0')
				}
			}
		}
		d.mods = s.String()
	default:
		y := (box.Min.Y + box.Max.Y) / 2
		prev, n := true, 0
		for x := box.Min.X; x < box.Max.X; x++ {
			if v := at(x, y); v != prev {
				d.runs = append(d.runs, n)
				prev, n = v, 0
			}
			n++
		}
		d.runs = append(d.runs, n)
		narrow := d.runs[0]
		for i, r := range d.runs {
			if refKind(typ.Type) == "wn" {
				d.runs[i] = 1
				if r > narrow {
					d.runs[i] = 2
				}
			} else {
				d.runs[i] = r / refPx
			}
		}
	}
	return d
}

// qrMask is a QR Code's mask pattern (0 to 7), read from its format information beside the
// top left finder.
func qrMask(d refDrawn) int {
	bit := func(x, y int) int {
		if d.mods[y*d.w+x] == '1' {
			return 1
		}
		return 0
	}
	v := 0
	for _, x := range []int{0, 1, 2, 3, 4} { // bits 14 to 10: EC level (2), mask (3)
		v = v<<1 | bit(x, 8)
	}
	return (v ^ 0b10101) & 7
}

// aligned is the request that asks BWIPP for the choices the standard leaves to the encoder
// as the preview made them, so that the same data gives the same modules: a QR Code's
// version and mask, a Data Matrix's size, a PDF417's columns and rows.
func aligned(c refCase, d refDrawn) bwRequest {
	opts := map[string]any{}
	for k, v := range c.opts {
		opts[k] = v
	}
	switch d.typ {
	case "GS1-QRCode", "GS1-QRCode-Plain":
		opts["fixedeclevel"] = true // BWIPP raises the level to fill the symbol otherwise
		opts["version"] = fmt.Sprint((d.w - 17) / 4)
		opts["mask"] = qrMask(d) + 1
	case "DataMatrix", "GS1-DataMatrix", "GS1-DataMatrix-Plain":
		opts["columns"], opts["rows"] = d.w, d.h
		if d.w != d.h {
			opts["format"] = "rectangle"
		}
	case "PDF417":
		opts["columns"], opts["rows"], opts["rowmult"] = (d.w-69)/17, d.h, 1
		opts["fixedeclevel"] = true
	}
	return bwRequest{BCID: c.bcid, Text: c.text, Opts: opts}
}

// refMatches says whether the preview's modules are BWIPP's, and where they differ first.
func refMatches(d refDrawn, s bwSymbol) (bool, string) {
	if s.Error != "" {
		return false, "BWIPP: " + s.Error
	}
	if refKind(d.typ) == "2d" {
		if d.w != s.W || d.h != s.H {
			return false, fmt.Sprintf("%d x %d modules, BWIPP's %d x %d", d.w, d.h, s.W, s.H)
		}
		for i := range d.mods {
			if d.mods[i] != s.Pixs[i] {
				return false, fmt.Sprintf("module %d,%d differs", i%d.w, i/d.w)
			}
		}
		return true, ""
	}
	want := s.SBS
	if len(want)%2 == 0 { // BWIPP ends Code 39 and ITF with the space after the last bar
		want = want[:len(want)-1]
	}
	if refKind(d.typ) == "wn" {
		wn := make([]int, len(want))
		for i, r := range want {
			wn[i] = min(r, 2)
		}
		want = wn
	}
	if fmt.Sprint(d.runs) != fmt.Sprint(want) {
		return false, fmt.Sprintf("bars and spaces\n%v, BWIPP's\n%v", d.runs, want)
	}
	return true, ""
}

// refSize is the modules of the preview's symbol and of BWIPP's: across times down for a
// matrix, across for a linear symbol.
func refSize(d refDrawn, s bwSymbol) (int, int) {
	if refKind(d.typ) == "2d" {
		return d.w * d.h, s.W * s.H
	}
	ours, theirs := 0, 0
	for _, r := range d.runs {
		ours += r
	}
	for _, r := range s.SBS {
		theirs += r
	}
	return ours, theirs
}

// refDecode reads the preview's symbol with gozxing: its data and symbology identifier.
func refDecode(d refDrawn) (string, string, error) {
	bmp, err := gozxing.NewBinaryBitmap(gozxing.NewHybridBinarizer(gozxing.NewLuminanceSourceFromImage(d.img)))
	if err != nil {
		return "", "", err
	}
	var r gozxing.Reader
	switch d.typ {
	case "Code128", "GS1-128":
		r = oned.NewCode128Reader()
	case "Code39":
		r = oned.NewCode39Reader()
	case "ITF":
		r = oned.NewITFReader()
	case "EAN-13":
		r = oned.NewEAN13Reader()
	case "UPC-A":
		r = oned.NewUPCAReader()
	case "GS1-QRCode", "GS1-QRCode-Plain":
		r = qrcode.NewQRCodeReader()
	case "DataMatrix", "GS1-DataMatrix", "GS1-DataMatrix-Plain":
		r = datamatrix.NewDataMatrixReader()
	default:
		return "", "", fmt.Errorf("no gozxing reader for %s", d.typ)
	}
	hints := map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true}
	if refGS1(d.typ) {
		hints[gozxing.DecodeHintType_ASSUME_GS1] = true
	}
	res, err := r.Decode(bmp, hints)
	if err != nil {
		return "", "", err
	}
	id, _ := res.GetResultMetadata()[gozxing.ResultMetadataType_SYMBOLOGY_IDENTIFIER].(string)
	text := strings.TrimPrefix(res.GetText(), "]C1")
	if id == "]d2" {
		text = strings.TrimPrefix(text, "\x1d")
	}
	return text, id, nil
}

// zbarFiles reads PNG files with one run of zbarimg: each file's symbols.
func zbarFiles(t *testing.T, bin string, files []string) map[string][]zbarSymbol {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"--xml", "-q", "-Supca.enable"}, files...)...).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("zbarimg: %v", err)
	}
	var doc struct {
		Sources []struct {
			Href  string `xml:"href,attr"`
			Index []struct {
				Symbols []zbarSymbol `xml:"symbol"`
			} `xml:"index"`
		} `xml:"source"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("zbarimg's XML: %v", err)
	}
	res := map[string][]zbarSymbol{}
	for _, s := range doc.Sources {
		for _, i := range s.Index {
			res[s.Href] = append(res[s.Href], i.Symbols...)
		}
	}
	return res
}

// TestReferenceEncoder compares every symbol of refCases with BWIPP's (bwip-js, an encoder
// independent of the preview's), module for module once the choices the standard leaves to
// the encoder are aligned (aligned), and reads each back with zbarimg where Debian's zbar
// reads the symbology. A case with alt set is one the standard lets the preview encode
// otherwise: its decoded data and symbology identifier are compared instead.
func TestReferenceEncoder(t *testing.T) {
	node, dir := bwipjs(t)
	zbar := zbarimg(t)
	tmp := t.TempDir()
	cases := refCases()
	drawn := make([]refDrawn, len(cases))
	reqs := make([]bwRequest, len(cases))
	var files []string
	file := map[int]string{}
	for i, c := range cases {
		drawn[i] = refRender(t, c.obj)
		reqs[i] = aligned(c, drawn[i])
		if zbarType[drawn[i].typ] != "" && !(drawn[i].typ == "ITF" && len(c.want) < 6) { // zbar's ITF has 6 digits or more
			f := filepath.Join(tmp, fmt.Sprintf("%03d.png", i))
			var b bytes.Buffer
			if err := png.Encode(&b, drawn[i].img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			file[i] = f
		}
	}
	// Each alt case is also asked of BWIPP with nothing aligned, its smallest symbol.
	own := map[int]int{}
	all := reqs
	for i, c := range cases {
		if c.alt != "" && drawn[i].typ != "PDF417" {
			opts := map[string]any{}
			for k, v := range c.opts {
				opts[k] = v
			}
			if strings.Contains(drawn[i].typ, "QRCode") {
				opts["fixedeclevel"] = true
			}
			own[i] = len(all)
			all = append(all, bwRequest{BCID: c.bcid, Text: c.text, Opts: opts})
		}
	}
	syms := bwipp(t, node, dir, all)
	zb := zbarFiles(t, zbar, files)
	// Neither gozxing nor Debian's zbar reads PDF417: zxing-cpp reads those not BWIPP's.
	zxFile := map[int]string{}
	var zxFiles []string
	for i, c := range cases {
		if ok, _ := refMatches(drawn[i], syms[i]); !ok && c.alt != "" && drawn[i].typ == "PDF417" {
			f := filepath.Join(tmp, fmt.Sprintf("zx%03d.png", i))
			var b bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, drawn[i].img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			zxFile[i] = f
			zxFiles = append(zxFiles, f)
		}
	}
	var zx map[string][]zxSymbol
	if len(zxFiles) > 0 {
		zx = zxingRead(t, zxingCpp(t), zxFiles)
	}
	same, decoded, larger := 0, 0, 0
	for i, c := range cases {
		d := drawn[i]
		t.Run(c.name, func(t *testing.T) {
			for _, w := range d.warns {
				// A symbol drawn otherwise than the object asks, or cut; other warnings (the
				// rules of a symbol's use) say nothing of its encoding.
				if strings.Contains(w.Msg, "drawn") || strings.Contains(w.Msg, "cut") {
					t.Errorf("warning: %v", w)
				}
			}
			ok, why := refMatches(d, syms[i])
			sameSymbol := ok
			switch {
			case ok && c.alt != "":
				t.Errorf("modules are BWIPP's: the case need not be compared by its decoded data (%s)", c.alt)
			case ok:
				same++
			case c.alt == "":
				t.Errorf("modules differ from BWIPP's for %s %q %v: %s", reqs[i].BCID, reqs[i].Text, reqs[i].Opts, why)
			case d.typ == "PDF417":
				z := zx[zxFile[i]]
				if len(z) != 1 || z[0].Text != c.want || z[0].SymID != refSymID[d.typ] || !z[0].Valid {
					t.Errorf("zxing-cpp read %+v, want %q as %s", z, c.want, refSymID[d.typ])
				} else {
					decoded++
				}
			default:
				text, id, err := refDecode(d)
				if err != nil {
					t.Fatalf("gozxing cannot read it: %v", err)
				}
				if text != c.want || id != refSymID[d.typ] {
					t.Errorf("read %q as %s, want %q as %s", text, id, c.want, refSymID[d.typ])
				} else {
					decoded++
				}
			}
			if k, ok := own[i]; ok && !sameSymbol {
				ours, theirs := refSize(d, syms[k])
				if (ours > theirs) != (c.larger != "") {
					t.Errorf("the preview's symbol is %d modules, BWIPP's smallest %d; larger said %q", ours, theirs, c.larger)
				}
				if ours > theirs {
					larger++
				}
			}
			if f, ok := file[i]; ok {
				want := c.want
				if c.zbarWant != "" {
					want = c.zbarWant
				}
				s := zb[f]
				if len(s) != 1 {
					t.Fatalf("zbarimg read %d symbols: %+v", len(s), s)
				}
				if s[0].Type != zbarType[d.typ] || zbarData(t, s[0]) != want || strings.Contains(s[0].Modifiers, "GS1") != refGS1(d.typ) {
					t.Errorf("zbarimg read %q as %s (modifiers %q), want %q as %s", zbarData(t, s[0]), s[0].Type, s[0].Modifiers, want, zbarType[d.typ])
				}
			}
		})
	}
	t.Logf("%d symbols compared with bwip-js %s: %d module for module, %d by decoded data and symbology identifier (%d of them larger than BWIPP's smallest); %d read back by zbarimg",
		len(cases), bwipjsVersion, same, decoded, larger, len(files))
}
