package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"golang.org/x/image/font/gofont/goregular"
)

const previewLabel = `{"format":3,"width":50,"height":30,"objs":[
	{"type":"Text","x":2,"y":2,"text":"PALLET {{Pallet}}","font":{"family":"Arial","style":"Bold","height":4},"color":"black"},
	{"type":"GS1-QRCode","x":25,"y":18,"hAnchor":"CENTER","vAnchor":"CENTER","moduleSize":0.5,"apps":[{"id":"10","value":"{{Pallet}}"}]}]}`

func readPNGSize(t *testing.T, data []byte) (int, int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

// TestLabelsPreview: --file offline and NAME from the simulator (filled by its /simulation
// when a row is named) write a PNG of the label's size; warnings go to stderr, exit 0, or 1
// with --strict; --font maps a family.
func TestLabelsPreview(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := writeFile(t, "label.json", []byte(previewLabel))
	out := filepath.Join(dir, "a.png")

	r := cli(t, ctx, nil, "", "labels", "preview", "--file", file, "-o", out, "--dpi", "600").ok(t)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if w, h := readPNGSize(t, data); w != 1181 || h != 709 {
		t.Errorf("50 x 30 mm at 600 dpi: %d x %d", w, h)
	}
	// The QR Code's batch has no GTIN beside it on the label: a problem whatever its value.
	want := "problem: objs[1].apps[0]: AI (10) needs AI (01), (02), (03), (8006) or (8026)\n" +
		"warning: objs[0].text: {{Pallet}} at byte 7: a table column needs a table row; shown as written\n" +
		"warning: objs[0]: font \"Arial\" not given; drawn with Go Bold\n" +
		"warning: objs[1].apps[0].value: {{Pallet}} at byte 0: a table column needs a table row; shown as written\n"
	if r.stderr != want || r.stdout != "" {
		t.Errorf("stderr:\n%s\nwant:\n%s\nstdout %q", r.stderr, want, r.stdout)
	}
	if r := cli(t, ctx, nil, "", "labels", "preview", "--file", file, "-o", out, "--strict"); r.code != 1 ||
		!strings.HasSuffix(r.stderr, "labelctl: the preview has 1 problem and 3 warnings (--strict)\n") {
		t.Errorf("--strict: exit %d, %q", r.code, r.stderr)
	}
	ttf := writeFile(t, "font.ttf", goregular.TTF)
	r = cli(t, ctx, nil, previewLabel, "labels", "preview", "--file", "-", "--out", "-", "--font", "Arial:Bold="+ttf)
	if r.code != 0 || strings.Contains(r.stderr, "Arial") {
		t.Errorf("--font: exit %d, %q", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"labels", "preview", "--file", file},                               // no -o
		{"labels", "preview", "-o", out},                                    // neither NAME nor --file
		{"labels", "preview", "NAME", "--file", file, "-o", out},            // both
		{"labels", "preview", "--file", file, "-o", out, "--font", "Arial"}, // no =FILE
		{"labels", "preview", "--file", file, "-o", out, "--font", "Arial=/no/such.ttf"},
		{"labels", "preview", "--file", file, "-o", out, "--table", "T"},
		{"labels", "preview", "--file", "/no/such.json", "-o", out},
	} {
		if r := cli(t, ctx, nil, "", args...); r.code != 2 || !strings.HasPrefix(r.stderr, "labelctl: ") {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	// -o naming the label file itself (a slip for label.png) leaves the label as it was.
	before, _ := os.ReadFile(file)
	if r := cli(t, ctx, nil, "", "labels", "preview", "--file", file, "-o", file); r.code != 2 || !strings.Contains(r.stderr, "would overwrite it") {
		t.Errorf("-o the --file: exit %d, %q", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Error("-o the --file: the label file was overwritten")
	}

	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	cli(t, ctx, env, previewLabel, "labels", "put", "PALLET", "-").ok(t)
	cli(t, ctx, env, `{"columns":["Pallet"],"rows":[["P-0007"]]}`, "tables", "put", "PALLETS", "-").ok(t)
	r = cli(t, ctx, env, "", "labels", "preview", "PALLET", "--table", "PALLETS", "--key-column", "Pallet", "--key", "P-0007", "-o", "-")
	// Filled, the QR Code's batch still has no GTIN beside it: a problem lint reports of the
	// label as drawn (preview --strict fails on it).
	if r.code != 0 || r.stderr != "problem: objs[1].apps[0]: AI (10) needs AI (01), (02), (03), (8006) or (8026)\n"+
		"warning: objs[0]: font \"Arial\" not given; drawn with Go Bold\n" {
		t.Fatalf("from the simulator: exit %d, %q", r.code, r.stderr)
	}
	img, err := png.Decode(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	bmp, _ := gozxing.NewBinaryBitmap(gozxing.NewHybridBinarizer(gozxing.NewLuminanceSourceFromImage(img)))
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil || res.GetText() != "10P-0007" {
		t.Errorf("the QR Code filled by the simulator reads %v, %v", res, err)
	}
	if r := cli(t, ctx, env, "", "labels", "preview", "NOPE", "-o", out); r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Errorf("unknown label: exit %d, %q", r.code, r.stderr)
	}
}

// TestLabelsPreviewSymbolRules: the GS1 symbol rules' warnings (as lint gives them, of the
// filled label at the preview's resolution) and another object in a symbol's quiet zone are
// the preview's warnings: exit 0, 1 with --strict.
func TestLabelsPreviewSymbolRules(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "a.png")
	file := writeFile(t, "pallet.json", []byte(`{"format":3,"width":100,"height":60,"objs":[`+
		`{"type":"GS1-128","x":10,"y":10,"barWidth":0.45,"barHeight":32,"apps":[["00","106141411234567897"]]},`+
		`{"type":"Rect","x":6,"y":20,"width":2,"height":2}]}`))
	want := "warning: objs[0]: another object marks the symbol's quiet zone at x 6.0..8.0 mm, y 20.0..22.0 mm: a scanner may not read it\n" +
		"warning: objs[0].barWidth: X-dimension 0.423 mm (5 dots at 300 dpi) is under 0.495 mm, the least GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label\n"
	if r := cli(t, ctx, nil, "", "labels", "preview", "--file", file, "-o", out); r.code != 0 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	if r := cli(t, ctx, nil, "", "labels", "preview", "--file", file, "-o", out, "--strict"); r.code != 1 ||
		r.stderr != want+"labelctl: the preview has 2 warnings (--strict)\n" {
		t.Errorf("--strict: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
