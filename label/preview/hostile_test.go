package preview_test

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
)

// The hostile labels: each built in code, at a size given in bytes where it has one, so that a
// test runs a small one and the Performance table's command a large one.

// farPolyLines is a 100 x 100 mm label of PolyLines whose points lie kilometres off the label.
func farPolyLines() []byte {
	var objs []string
	for i := 0; i < 6; i++ {
		f := float64(i + 1)
		objs = append(objs, fmt.Sprintf(`{"type":"PolyLine","points":[%g,%g,%g,%g,%g,%g],"lineWidth":%g}`,
			-1e8*f, -1e8, 1e8*f, 1e8, -1e8, 1e8*f, 0.5*f))
	}
	return []byte(`{"format":3,"width":100,"height":100,"objs":[` + strings.Join(objs, ",") + `]}`)
}

// nestedText is a label of about n bytes: Texts whose text nests 64 codes around a body, so
// that every level would fill and copy the whole body and fail with it.
func nestedText(n int) []byte {
	const per = 1 << 20
	var objs []string
	for left := n; left > 0; left -= per {
		body := strings.Repeat("x", min(per, left))
		text := strings.Repeat("{VARIABLE;", 64) + body + strings.Repeat("}", 64)
		objs = append(objs, `{"type":"Text","x":1,"y":1,"text":"`+text+`","font":{"family":"Go","style":"Regular","height":3},"color":"black"}`)
	}
	return []byte(`{"format":3,"width":100,"height":100,"objs":[` + strings.Join(objs, ",") + `]}`)
}

// manyCodes is a label of about n bytes: one Text of codes that cannot be filled, each an
// error of its own.
func manyCodes(n int) []byte {
	text := strings.Repeat("{X}", n/3)
	return []byte(`{"format":3,"width":100,"height":100,"objs":[{"type":"Text","x":1,"y":1,"text":"` + text + `","font":{"family":"Go","style":"Regular","height":3},"color":"black"}]}`)
}

// wideText is a label of about n bytes: one line of text, nearly all of it beyond the label's
// right edge.
func wideText(n int) []byte {
	text := strings.Repeat("lorem ipsum ", n/12)
	return []byte(`{"format":3,"width":100,"height":100,"objs":[{"type":"Text","x":1,"y":1,"text":"` + text + `","font":{"family":"Go","style":"Regular","height":3},"color":"black"}]}`)
}

// bigPDF417 is a PDF417 of n bytes of text, far past the symbol's capacity.
func bigPDF417(n int) []byte {
	text := strings.Repeat("\u00e9ABC", n/5) // bytes the text mode cannot hold, runs of text too short for it
	return []byte(`{"format":3,"width":100,"height":100,"objs":[{"type":"PDF417","x":1,"y":1,"text":"` + text + `"}]}`)
}

// bigPNG is a 50 x 30 mm label with a 20 x 20 mm StaticBitmap holding bigPNGData(side).
func bigPNG(side int) []byte {
	return []byte(`{"format":3,"width":50,"height":30,"objs":[{"type":"StaticBitmap","x":1,"y":1,"width":20,"height":20,"bitmap":"` +
		base64.StdEncoding.EncodeToString(bigPNGData(side)) + `"}]}`)
}

// bigPNGData is a PNG of side x side pixels of 16-bit RGBA (8 bytes a pixel decoded), stripes
// deflate squeezes a thousandfold. The PNG is written a row at a time, never held whole.
func bigPNGData(side int) []byte {
	var png bytes.Buffer
	png.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, body []byte) {
		png.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
		png.WriteString(typ)
		png.Write(body)
		png.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(append([]byte(typ), body...))))
	}
	hdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(side)), uint32(side))
	chunk("IHDR", append(hdr, 16, 6, 0, 0, 0))
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+8*side)
	for y := 0; y < side; y++ {
		clear(row)
		if y%97 == 0 { // a row of stripes, then rows the same as the one above (filter Up)
			for x := 0; x < side; x++ {
				if (x/7+y/97)%3 == 0 {
					copy(row[1+8*x:], []byte{0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff})
				}
			}
		} else {
			row[0] = 2
		}
		zw.Write(row)
	}
	zw.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return png.Bytes()
}

// groupObjects are ordinary objects: texts with dynamic text, shapes and barcodes.
func groupObjects(n int) []string {
	kinds := []string{
		`{"type":"Text","x":2,"y":2,"text":"Lot {VARIABLE;Lot} {YEAR}","font":{"family":"Go","style":"Regular","height":2.5},"color":"black"}`,
		`{"type":"Rect","x":1,"y":1,"width":5,"height":5,"fillColor":"black"}`,
		`{"type":"PolyLine","points":[1,1,20,20,30,5],"lineWidth":0.3}`,
		`{"type":"Code128","x":2,"y":40,"text":"ABC-123","barHeight":8,"barWidth":0.25}`,
		`{"type":"GS1-128","x":2,"y":60,"barHeight":8,"barWidth":0.25,"apps":[["01","09501101530003"],["10","LOT42"]]}`,
	}
	out := make([]string, n)
	for i := range out {
		out[i] = kinds[i%len(kinds)]
	}
	return out
}

// nestedGroups puts n ordinary objects under depth nested groups; depth 0 is the flat label.
func nestedGroups(n, depth int) []byte {
	inner := strings.Join(groupObjects(n), ",")
	for i := 0; i < depth; i++ {
		inner = `{"type":"ObjectGroup","children":[` + inner + `]}`
	}
	return []byte(`{"format":3,"width":100,"height":100,"objs":[` + inner + `]}`)
}

// hostileEnv fills the labels' dynamic text.
var hostileEnv = &label.Env{
	Clock:     func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	Variables: map[string]string{"Lot": "LOT42"},
}

// stages runs every entry point on data: Parse, Validate, Fill, Render at 300 dpi.
func stages(tb testing.TB, data []byte) {
	l, err := label.Parse(data)
	if err != nil {
		tb.Fatalf("Parse: %v", err)
	}
	_ = l.Validate()
	_, _ = l.Fill(hostileEnv)
	if _, _, err := preview.Render(l, &preview.Options{DPI: 300, Env: hostileEnv}); err != nil {
		tb.Fatalf("Render: %v", err)
	}
}

// hostileLabels are the Performance table's labels at the size the table measures
// (HOSTILE_MB sets the size of those that have one, in MB; 1 by default).
func hostileLabels() []struct {
	name string
	data func() []byte
} {
	mb := 1.0
	if s := os.Getenv("HOSTILE_MB"); s != "" {
		mb, _ = strconv.ParseFloat(s, 64)
	}
	n := int(mb * (1 << 20))
	return []struct {
		name string
		data func() []byte
	}{
		{"FarPolyLines", farPolyLines},
		{"NestedText", func() []byte { return nestedText(n) }},
		{"ManyCodes", func() []byte { return manyCodes(n) }},
		{"WideText", func() []byte { return wideText(n) }},
		{"PDF417", func() []byte { return bigPDF417(200 << 10) }},
		{"BigPNG", func() []byte { return bigPNG(7999) }},
		{"Flat50", func() []byte { return nestedGroups(50, 0) }},
		{"Nested50", func() []byte { return nestedGroups(50, 64) }},
	}
}

// BenchmarkHostile runs every entry point on each hostile label; with -benchtime 1x under
// /usr/bin/time -v it gives the Performance table's time and peak memory.
func BenchmarkHostile(b *testing.B) {
	for _, h := range hostileLabels() {
		b.Run(h.name, func(b *testing.B) {
			data := h.data()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := cpuSeconds()
			for b.Loop() {
				stages(b, data)
			}
			// The process's CPU time besides the clock's: on a loaded machine it is the
			// figure that holds.
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(data)), "label-bytes")
		})
	}
}

// The bound label/README.md states: every entry point, on a label of n bytes rendered at 300
// dpi into an image of p pixels, allocates at most 256 bytes per byte of label besides a few
// copies of the image, and takes well under a second per MB. Allocation is what the test
// checks, as a count of the work that a loaded machine's clock would not give reliably; the
// clock only catches what allocates nothing, by a deadline far past the bound.
const (
	allocPerByte  = 256
	imageCopies   = 8
	allocConstant = 16 << 20
	deadline      = 20 * time.Second
)

// withinBound runs every entry point on data (rendered within maxPixels) and returns the bytes
// they allocated, the bound on them, and how long they took.
func withinBound(tb testing.TB, data []byte, dpi float64, maxPixels int64) (alloc, limit uint64, took time.Duration) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	l, err := label.Parse(data)
	if err != nil {
		return 0, 1, 0
	}
	_ = l.Validate()
	_, _ = l.Fill(hostileEnv)
	img, _, err := preview.Render(l, &preview.Options{DPI: dpi, Env: hostileEnv, MaxPixels: maxPixels})
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	pixels := uint64(0)
	if err == nil {
		pixels = uint64(img.Bounds().Dx() * img.Bounds().Dy())
	}
	return after.TotalAlloc - before.TotalAlloc, allocPerByte*uint64(len(data)) + imageCopies*4*pixels + allocConstant, took
}

// FuzzBounded: whatever label.Parse accepts parses, validates, fills and renders within the
// bound label/README.md states: the bytes allocated (counted, not timed, so that a loaded
// machine cannot fail it) at most 256 per byte of label beside a few copies of the image, and a
// deadline of seconds for what takes milliseconds.
func FuzzBounded(f *testing.F) {
	for _, data := range [][]byte{farPolyLines(), nestedText(2000), manyCodes(2000), wideText(2000), bigPDF417(3000),
		bigPNG(300), nestedGroups(20, 64)} {
		f.Add(data)
	}
	f.Add([]byte(`{"format":3,"width":30,"height":20,"objs":[{"type":"PolyLine","points":[0,0,1e6,20,-1e6,20],"segments":[0.01,0.01]},
		{"type":"PolyLine","points":[0,0,1e6,20],"segments":[0.01,0.02,0.03]},{"type":"PolyLine","points":[0,5,1e6,5],"segments":[0.01,0.01]}]}`))
	dashes := strings.Repeat(`{"type":"PolyLine","points":[0,1,1e6,1],"segments":[0.1,0.1]},`, 12)
	f.Add([]byte(`{"format":3,"width":30,"height":20,"objs":[` + dashes + `{"type":"Rect"}]}`))
	// At 50 dpi, within a quarter megapixel: the bound holds at any resolution, and a small
	// image leaves the fuzzer's time to the objects.
	const dpi, maxPixels = 50, 1 << 18
	f.Fuzz(func(t *testing.T, data []byte) {
		alloc, limit, took := withinBound(t, data, dpi, maxPixels)
		if alloc > limit {
			t.Fatalf("%d bytes of label: %d bytes allocated, over the bound of %d", len(data), alloc, limit)
		}
		if took > 5*time.Second {
			t.Fatalf("%d bytes of label: %v", len(data), took)
		}
	})
}

// bounded runs every entry point on data and fails when they allocate or take more than the
// bound allows; it returns the bytes allocated.
func bounded(t *testing.T, name string, data []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		stages(t, data)
	}()
	select {
	case <-done:
	case <-time.After(deadline * raceSlowdown):
		t.Fatalf("%s (%d bytes): Parse, Validate, Fill and Render take more than %v", name, len(data), deadline)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	l, _ := label.Parse(data)
	pixels := uint64(*l.Width*300/25.4+1) * uint64(*l.Height*300/25.4+1)
	limit := allocPerByte*uint64(len(data)) + imageCopies*4*pixels + allocConstant
	t.Logf("%s: %d bytes, %.1f MB allocated (%.0f per byte), %v", name, len(data), float64(alloc)/1e6, float64(alloc)/float64(len(data)), took)
	if alloc > limit {
		t.Errorf("%s (%d bytes): %d bytes allocated, over the bound of %d", name, len(data), alloc, limit)
	}
	return alloc
}

// TestHostileLabelsBounded: each hostile label parses, validates, fills and renders within the
// bound.
func TestHostileLabelsBounded(t *testing.T) {
	const n = 256 << 10
	for _, h := range []struct {
		name string
		data []byte
	}{
		{"far-off PolyLines", farPolyLines()},
		{"64 nested codes around a body", nestedText(n)},
		{"codes that cannot be filled", manyCodes(n)},
		{"PDF417 of 200 KB", bigPDF417(200 << 10)},
	} {
		t.Run(h.name, func(t *testing.T) { bounded(t, h.name, h.data) })
	}
}

// TestNestedGroupsBounded: the same objects under 64 nested groups parse, validate, fill and
// render (at 25 dpi, where the objects' work shows beside the image's) with at most 2.6 times
// the allocation of the flat label, where each level wrote every property's path again.
func TestNestedGroupsBounded(t *testing.T) {
	work := func(data []byte) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		l, err := label.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		_ = l.Validate()
		_, _ = l.Fill(hostileEnv)
		if _, _, err := preview.Render(l, &preview.Options{DPI: 25, Env: hostileEnv}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	flat, nested := work(nestedGroups(500, 0)), work(nestedGroups(500, 64))
	t.Logf("500 objects: %d bytes allocated flat, %d under 64 groups (%.2fx)", flat, nested, float64(nested)/float64(flat))
	if float64(nested) > 2.6*float64(flat) {
		t.Errorf("500 objects under 64 groups: %d bytes allocated, %.2f times the flat label's %d", nested, float64(nested)/float64(flat), flat)
	}
}

// TestTextBeyondEdgeNotLaidOut: a line of 256 KB running off the label's right edge, and 256
// KB of lines running off its bottom edge, cost little more than a short text: what lies
// beyond the edges is not laid out (they allocated 270 and 165 bytes per byte of text).
func TestTextBeyondEdgeNotLaidOut(t *testing.T) {
	render := func(data []byte) uint64 {
		l, err := label.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, _, err := preview.Render(l, &preview.Options{DPI: 300, Env: hostileEnv}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	tall := func(n int) []byte {
		return []byte(`{"format":3,"width":100,"height":100,"objs":[{"type":"Text","x":1,"y":1,"text":"` +
			strings.Repeat(`a\n`, n/3) + `","font":{"family":"Go","style":"Regular","height":3},"color":"black"}]}`)
	}
	for _, c := range []struct {
		name        string
		short, long []byte
	}{{"a line", wideText(120), wideText(256 << 10)}, {"lines", tall(120), tall(256 << 10)}} {
		a, b := render(c.short), render(c.long)
		extra := float64(b-a) / float64(len(c.long)-len(c.short))
		t.Logf("%s of %d bytes: %d bytes allocated; of %d: %d (%.1f per byte more)", c.name, len(c.short), a, len(c.long), b, extra)
		if extra > 32 {
			t.Errorf("%s of %d bytes beyond the label's edge: %.1f bytes allocated per byte, want at most 32", c.name, len(c.long), extra)
		}
	}
}

// TestBigPNGDecodedAtPrintSize: a PNG of 2000 x 2000 16-bit pixels (32 MB decoded) in a
// 20 mm box costs little more than a PNG of 300 x 300: it is read a row at a time into the
// picture of its box (decoded whole, it allocated its 32 MB).
func TestBigPNGDecodedAtPrintSize(t *testing.T) {
	render := func(data []byte) uint64 {
		l, err := label.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, warns, err := preview.Render(l, &preview.Options{DPI: 300})
		if err != nil || len(warns) > 0 {
			t.Fatal(err, warns)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, big := bigPNG(300), bigPNG(2000)
	a, b := render(small), render(big)
	t.Logf("a PNG of 300 x 300 in %d bytes: %d bytes allocated; of 2000 x 2000 in %d: %d", len(small), a, len(big), b)
	if b > a+4<<20 {
		t.Errorf("a PNG of 2000 x 2000 16-bit pixels: %d bytes allocated, %d more than one of 300 x 300; want at most 4 MiB more", b, b-a)
	}
}

// BenchmarkNestedGroups runs each entry point on 500 ordinary objects, flat and under 64
// nested groups (rendered at 25 dpi, where the objects' work shows beside the image's).
func BenchmarkNestedGroups(b *testing.B) {
	for _, depth := range []int{0, 64} {
		data := nestedGroups(500, depth)
		l, err := label.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range []struct {
			name string
			run  func()
		}{
			{"Parse", func() { _, _ = label.Parse(data) }},
			{"Validate", func() { _ = l.Validate() }},
			{"Fill", func() { _, _ = l.Fill(hostileEnv) }},
			{"Render", func() { _, _, _ = preview.Render(l, &preview.Options{DPI: 25, Env: hostileEnv}) }},
		} {
			b.Run(fmt.Sprintf("%s/depth=%d", st.name, depth), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					st.run()
				}
			})
		}
	}
}
