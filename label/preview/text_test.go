package preview_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
)

// TestTextOCR: Debian's tesseract reads back a line drawn in a plain font at 300 dpi.
func TestTextOCR(t *testing.T) {
	bin, err := exec.LookPath("tesseract")
	if err != nil {
		if os.Getenv("LABELPRINTER_REQUIRE_TESSERACT") == "1" {
			t.Fatal("tesseract not found and LABELPRINTER_REQUIRE_TESSERACT=1")
		}
		t.Skip("tesseract not found: apt-get install tesseract-ocr to check the preview's text by OCR")
	}
	const text = "Best before 21.02.2025 LOT42"
	l := parse(t, `{"format":3,"width":120,"height":14,"objs":[
		{"type":"Text","x":4,"y":4,"text":"Best before {VARIABLE;Date} LOT42","font":{"family":"Go","style":"Regular","height":5},"color":"black"}]}`)
	var b bytes.Buffer
	w, err := preview.PNG(&b, l, &preview.Options{Env: &label.Env{Variables: map[string]string{"Date": "21.02.2025"}}})
	if err != nil || len(w) != 0 {
		t.Fatal(err, w)
	}
	f := filepath.Join(t.TempDir(), "text.png")
	if err := os.WriteFile(f, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, f, "stdout", "--psm", "7").Output()
	if err != nil {
		t.Fatalf("tesseract: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != text {
		t.Errorf("tesseract read %q, want %q", got, text)
	}
}

func TestFontMap(t *testing.T) {
	l := parse(t, `{"format":3,"width":60,"height":20,"objs":[
		{"type":"Text","x":2,"y":2,"text":"Hello","font":{"family":"Arial","style":"Regular","height":5},"color":"black"},
		{"type":"Text","x":2,"y":10,"text":"Narrow","font":{"family":"Arial Narrow","style":"Regular","height":5},"color":"black"}]}`)
	_, w := render(t, l, nil)
	want := "objs[0]: font \"Arial\" not given; drawn with Go Regular\nobjs[1]: font \"Arial Narrow\" not given; drawn with Go Regular"
	if w.String() != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", w, want)
	}
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	ttf := filepath.Join(t.TempDir(), "narrow.ttf")
	if err := os.WriteFile(ttf, goregular.TTF, 0o600); err != nil {
		t.Fatal(err)
	}
	_, w = render(t, l, &preview.Options{Fonts: map[preview.FontKey]preview.FontSource{
		{Family: "arial", Style: "Regular"}: {Font: f},
		{Family: "Arial Narrow"}:            {File: ttf},
	}})
	if len(w) != 0 {
		t.Errorf("mapped fonts warned: %v", w)
	}
	_, w = render(t, l, &preview.Options{Fonts: map[preview.FontKey]preview.FontSource{
		{Family: "Arial"}: {File: filepath.Join(t.TempDir(), "missing.ttf")},
	}})
	if len(w) != 2 || !strings.Contains(w[0].Msg, "missing.ttf") || !strings.HasSuffix(w[0].Msg, "drawn with Go Regular") {
		t.Errorf("a missing font file: %v", w)
	}
}

// TestTextLayout: a text with a width wraps inside it and aligns in it; a filled code draws
// the same as its value written out.
func TestTextLayout(t *testing.T) {
	const long = "one two three four five six seven eight nine ten eleven twelve"
	for _, align := range []string{"LEFT", "CENTER", "RIGHT", "JUSTIFIED"} {
		l := parse(t, `{"format":3,"width":60,"height":40,"objs":[
			{"type":"Text","x":10,"y":5,"width":30,"hAlign":"`+align+`","text":"`+long+`","font":{"family":"Go","style":"Regular","height":3},"color":"black"}]}`)
		img, w := render(t, l, &preview.Options{DPI: 254})
		if len(w) != 0 {
			t.Fatal(w)
		}
		minX, maxX, maxY := 1<<30, -1, -1
		for y := 0; y < 400; y++ {
			if a, b := span(img, y, false); a >= 0 {
				minX, maxX, maxY = min(minX, a), max(maxX, b), y
			}
		}
		if minX < 100 || maxX >= 400 {
			t.Errorf("%s: text spans columns %d..%d, outside the 30 mm box 100..399", align, minX, maxX)
		}
		if maxY < 5*10+2*30 {
			t.Errorf("%s: text ends at row %d: not wrapped over 3 lines or more", align, maxY)
		}
		switch align {
		case "LEFT":
			if minX > 102 {
				t.Errorf("LEFT starts at %d", minX)
			}
		case "RIGHT", "JUSTIFIED":
			if maxX < 390 {
				t.Errorf("%s ends at %d", align, maxX)
			}
		}
	}
	filled, _ := render(t, parse(t, `{"format":3,"width":60,"height":10,"objs":[
		{"type":"Text","x":1,"y":1,"text":"Lot {VARIABLE;Lot}","font":{"family":"Go","style":"Regular","height":4},"color":"black"}]}`),
		&preview.Options{Env: &label.Env{Variables: map[string]string{"Lot": "A7"}}})
	plain, _ := render(t, parse(t, `{"format":3,"width":60,"height":10,"objs":[
		{"type":"Text","x":1,"y":1,"text":"Lot A7","font":{"family":"Go","style":"Regular","height":4},"color":"black"}]}`), nil)
	if !bytes.Equal(filled.Pix, plain.Pix) {
		t.Error("a filled variable draws differently from its value")
	}
}

// TestMissingGlyphs: a character the font does not have is drawn as ? and warned about.
func TestMissingGlyphs(t *testing.T) {
	l := parse(t, `{"format":3,"width":60,"height":10,"objs":[
		{"type":"Text","x":1,"y":1,"text":"Tōkyō 東京","font":{"family":"Go","style":"Regular","height":4},"color":"black"}]}`)
	_, w := render(t, l, nil)
	if w.String() != `objs[0].text: characters "東京" are not in the font; drawn as ?` {
		t.Errorf("warnings: %v", w)
	}
}
