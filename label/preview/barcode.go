package preview

import (
	"fmt"
	"image"
	"image/color"
	"strings"

	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/gs1"
	"github.com/labelprinter/go-labelprinter/label/internal/pdf417"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode/decoder"
	qrencoder "github.com/makiuchi-d/gozxing/qrcode/encoder"
)

// fnc1 is how gozxing's Code 128 writer is told FNC1.
const fnc1 = '\u00f1'

// gs is the group separator that ends a variable-length GS1 value in a -Plain string and
// that scanners give for FNC1 separators.
const gs = '\x1d'

// defaultBarDots is the narrow bar of a linear barcode whose label leaves barWidth out, in
// printer dots (the "common barcode properties" page that would say is not found).
const defaultBarDots = label.DefaultBarDots

// linear is a linear symbol: bar and space widths in pixels, starting with a bar.
type linear struct {
	runs     []int
	quiet    [2]int // left and right quiet zones, pixels
	hBear    int    // ITF bearer bars above and below, pixels
	vBear    int    // and at the ends
	heightPx int
}

// matrix is a 2D symbol: modules, true is dark.
type matrix struct {
	w, h  int
	dark  []bool
	quiet int // modules on each side
	need  int // the modules of quiet zone the symbology needs, whatever quietZone says
}

func (m *matrix) at(x, y int) bool { return m.dark[y*m.w+x] }

func (r *renderer) barWidth(path string, bw *float64) int {
	if bw == nil {
		return defaultBarDots
	}
	if !finite(*bw) || *bw <= 0 {
		r.warn(path+".barWidth", "barWidth %v; drawn with %d dots", *bw, defaultBarDots)
		return defaultBarDots
	}
	w := px(*bw, r.sx)
	if w < 1 {
		r.warn(path+".barWidth", "barWidth %v mm is under a dot at %v dpi; drawn one dot wide", *bw, r.dpiX)
		w = 1
	}
	return w
}

func (r *renderer) barHeight(path string, bh *float64) int {
	if bh == nil || !finite(*bh) || *bh <= 0 {
		r.warn(path+".barHeight", "no usable barHeight; drawn 10 mm high")
		return px(10, r.sy)
	}
	return max1(px(*bh, r.sy))
}

// gs1Content joins GS1 elements as gs1.Raw does (a separator after a value whose AI has no
// predefined length, unless it is the last), with sep, what the encoder takes for FNC1, as
// the separator.
func gs1Content(apps []label.App, sep string) string {
	var b strings.Builder
	for i, a := range apps {
		b.WriteString(a.ID)
		b.WriteString(a.Value)
		if i < len(apps)-1 && !gs1.PredefinedLength(a.ID) {
			b.WriteString(sep)
		}
	}
	return b.String()
}

func (r *renderer) barcode(o label.Object, path string) {
	pos, _ := o.(label.Positioned)
	if pos == nil {
		return
	}
	var lin *linear
	var mat *matrix
	var err error
	var modX, modY int
	col := color.RGBA{0, 0, 0, 255}
	if emptyGS1(o) {
		// A GS1 symbol with no element string would scan as an empty symbol, or as not GS1.
		b := r.box(pos.Position(), px(20, r.sx), px(10, r.sy), path)
		r.mark(b)
		r.warn(path, "%s has no GS1 data; drawn as a marked box", o.Type())
		return
	}
	switch o := o.(type) {
	case *label.Code128:
		mw := r.barWidth(path, o.BarWidth)
		text := label.Or(o.Text, "")
		if err = noEscapes(text); err != nil {
			break
		}
		hints := map[gozxing.EncodeHintType]any{}
		set := ""
		switch enc := label.Or(o.Encoding, label.DefaultEncoding); enc {
		case "AUTO":
		case "A", "B", "C":
			set = enc
			hints[gozxing.EncodeHintType_FORCE_CODE_SET] = enc
		default:
			r.warn(path+".encoding", "encoding %q not known; drawn AUTO", enc)
		}
		lin, err = oneD(oned.NewCode128Writer(), gozxing.BarcodeFormat_CODE_128, text, hints, mw, 10)
		if err != nil && set != "" { // oneD adds its own hints: only a code set asked for is retried
			r.warn(path+".encoding", "the text cannot be written in code set %s (%v); drawn AUTO", set, err)
			lin, err = oneD(oned.NewCode128Writer(), gozxing.BarcodeFormat_CODE_128, text, nil, mw, 10)
		}
		if lin != nil {
			lin.heightPx = r.barHeight(path, o.BarHeight)
		}
	case *label.GS1128:
		mw := r.barWidth(path, o.BarWidth)
		if err = noEscapes(gs1Content(o.Apps, "")); err != nil {
			break
		}
		content := string(fnc1) + gs1Content(o.Apps, string(fnc1))
		lin, err = oneD(oned.NewCode128Writer(), gozxing.BarcodeFormat_CODE_128, content, nil, mw, 10)
		if lin != nil {
			lin.heightPx = r.barHeight(path, o.BarHeight)
			r.gs1128Length(lin, path)
		}
	case *label.Code39:
		mw := r.barWidth(path, o.BarWidth)
		lin, err = code39(label.Or(o.Text, ""), label.Or(o.CheckDigit, false), r.ratio(path, o.BarRatio), mw)
		if lin != nil {
			lin.heightPx = r.barHeight(path, o.BarHeight)
		}
	case *label.ITF:
		mw := r.barWidth(path, o.BarWidth)
		lin, err = itf(label.Or(o.Text, ""), r.ratio(path, o.BarRatio), mw)
		if lin != nil {
			lin.heightPx = r.barHeight(path, o.BarHeight)
			hb, vb := label.Or(o.HBearerBar, 0), label.Or(o.VBearerBar, 0)
			if finite(hb) && hb > 0 && hb < 100 {
				lin.hBear = max1(int(hb*float64(mw) + 0.5))
			}
			if finite(vb) && vb > 0 && vb < 100 {
				lin.vBear = max1(int(vb*float64(mw) + 0.5))
			}
		}
	case *label.EAN13:
		mw := r.barWidth(path, o.BarWidth)
		text := r.gtin(path, label.Or(o.Text, ""), 13)
		lin, err = oneD(oned.NewEAN13Writer(), gozxing.BarcodeFormat_EAN_13, text, nil, mw, 0)
		if lin != nil {
			lin.quiet = [2]int{11 * mw, 7 * mw}
			lin.heightPx = r.barHeight(path, o.BarHeight)
		}
	case *label.UPCA:
		mw := r.barWidth(path, o.BarWidth)
		text := r.gtin(path, label.Or(o.Text, ""), 12)
		lin, err = oneD(oned.NewUPCAWriter(), gozxing.BarcodeFormat_UPC_A, text, nil, mw, 9)
		if lin != nil {
			lin.heightPx = r.barHeight(path, o.BarHeight)
		}
	case *label.PDF417:
		col = r.color(path+".barColor", o.BarColor, label.DefaultColor)
		mat, err = r.pdf417(o, path)
		modX = r.barWidth(path, o.BarWidth)
		modY = 3 * modX
		if o.RowHeight != nil && finite(*o.RowHeight) && *o.RowHeight > 0 {
			modY = max1(px(*o.RowHeight, r.sy))
		}
		if mat != nil {
			mat.need = mat.quiet
		}
		if mat != nil && !label.Or(o.QuietZone, true) {
			mat.quiet = 0
		}
		if mat != nil {
			mat.quiet += r.extraQuiet(path, o.ExtraQuietZone, modX)
		}
	case *label.DataMatrix:
		col = r.color(path+".color", o.Color, label.DefaultColor)
		mat, err = r.dataMatrix(path, label.Or(o.Text, ""), false, o.Size, label.Or(o.Rectangular, false))
		modX, modY = r.module(path, o.ModuleSize)
		r.quiet(mat, path, o.QuietZone, o.ExtraQuietZone, modX)
	case *label.GS1DataMatrix:
		col = r.color(path+".color", o.Color, label.DefaultColor)
		mat, err = r.dataMatrix(path, gs1Content(o.Apps, string(gs)), true, o.Size, label.Or(o.Rectangular, false))
		modX, modY = r.module(path, o.ModuleSize)
		r.quiet(mat, path, o.QuietZone, o.ExtraQuietZone, modX)
	case *label.GS1DataMatrixPlain:
		col = r.color(path+".color", o.Color, label.DefaultColor)
		if label.Or(o.Optimize, false) {
			r.warn(path+".optimize", "optimize is the printer's own; drawn without")
		}
		mat, err = r.dataMatrix(path, label.Or(o.Text, ""), true, o.Size, label.Or(o.Rectangular, false))
		modX, modY = r.module(path, o.ModuleSize)
		r.quiet(mat, path, o.QuietZone, o.ExtraQuietZone, modX)
	case *label.GS1QRCode:
		col = r.color(path+".color", o.Color, label.DefaultColor)
		mat, err = r.qr(path, gs1Content(o.Apps, string(gs)), o.Size, o.ECCLevel)
		modX, modY = r.module(path, o.ModuleSize)
		r.quiet(mat, path, o.QuietZone, o.ExtraQuietZone, modX)
	case *label.GS1QRCodePlain:
		col = r.color(path+".color", o.Color, label.DefaultColor)
		if label.Or(o.Optimize, false) {
			r.warn(path+".optimize", "optimize is the printer's own; drawn without")
		}
		mat, err = r.qr(path, label.Or(o.Text, ""), o.Size, o.ECCLevel)
		modX, modY = r.module(path, o.ModuleSize)
		r.quiet(mat, path, o.QuietZone, o.ExtraQuietZone, modX)
	default:
		r.warn(path, "object type %q not drawn by the preview", o.Type())
		return
	}
	if err != nil || (lin == nil && mat == nil) {
		b := r.box(pos.Position(), px(20, r.sx), px(10, r.sy), path)
		r.mark(b)
		r.warn(path, "%s not drawn (%v); drawn as a marked box", o.Type(), err)
		return
	}
	if lin != nil {
		r.drawLinear(lin, pos.Position(), path)
		return
	}
	r.drawMatrix(mat, modX, modY, col, pos.Position(), path)
}

// emptyGS1 reports a GS1 object without data: no apps, or an empty -Plain string.
func emptyGS1(o label.Object) bool {
	switch o := o.(type) {
	case *label.GS1128:
		return len(o.Apps) == 0
	case *label.GS1DataMatrix:
		return len(o.Apps) == 0
	case *label.GS1QRCode:
		return len(o.Apps) == 0
	case *label.GS1DataMatrixPlain:
		return label.Or(o.Text, "") == ""
	case *label.GS1QRCodePlain:
		return label.Or(o.Text, "") == ""
	}
	return false
}

// noEscapes refuses the characters gozxing's Code 128 writer reads as FNC1 to FNC4
// (U+00F1 to U+00F4), which would otherwise be drawn as function characters, not as text.
func noEscapes(text string) error {
	for i, c := range text {
		if c >= '\u00f1' && c <= '\u00f4' {
			return fmt.Errorf("character %q at byte %d cannot be drawn in Code 128", c, i)
		}
	}
	return nil
}

func (r *renderer) ratio(path string, p *float64) float64 {
	v := label.Or(p, label.DefaultBarRatio)
	if !finite(v) || v < 2 || v > 3 {
		r.warn(path+".barRatio", "barRatio %v outside 2 to 3; drawn %v", v, label.DefaultBarRatio)
		return label.DefaultBarRatio
	}
	return v
}

// module is a 2D symbol's module size in pixels on each axis (label.ModuleMM).
func (r *renderer) module(path string, ms *float64) (int, int) {
	if ms != nil && (!finite(*ms) || *ms <= 0 || *ms > 100) {
		r.warn(path+".moduleSize", "moduleSize %v; drawn with %d dots", *ms, label.DefaultModuleDots)
		ms = nil
	}
	if ms == nil {
		return label.DefaultModuleDots, label.DefaultModuleDots
	}
	x, y := px(label.ModuleMM(ms, r.dpiX), r.sx), px(label.ModuleMM(ms, r.dpiY), r.sy)
	if x < 1 || y < 1 {
		r.warn(path+".moduleSize", "moduleSize %v mm is under a dot; drawn one dot", *ms)
	}
	return max1(x), max1(y)
}

func (r *renderer) quiet(m *matrix, path string, qz *bool, extra *float64, mod int) {
	if m == nil {
		return
	}
	m.need = m.quiet
	if !label.Or(qz, true) {
		m.quiet = 0
	}
	m.quiet += r.extraQuiet(path, extra, mod)
}

// extraQuiet reads extraQuietZone as mm (every length of the format is), in whole modules.
func (r *renderer) extraQuiet(path string, extra *float64, mod int) int {
	if extra == nil {
		return 0
	}
	if !finite(*extra) || *extra < 0 || *extra > 1000 {
		r.warn(path+".extraQuietZone", "extraQuietZone %v; ignored", *extra)
		return 0
	}
	return (px(*extra, r.sx) + mod - 1) / mod
}

// gtin returns an EAN-13 (n = 13) or UPC-A (n = 12) number with its check digit: computed
// when the text leaves it out, corrected with a warning when it is wrong.
func (r *renderer) gtin(path, text string, n int) string {
	if !allDigits(text) || (len(text) != n && len(text) != n-1) {
		return text // the writer's error says what is wrong
	}
	body := text[:n-1]
	full, err := gs1.CheckDigit(body)
	if err != nil {
		return text // the writer's error says what is wrong
	}
	check := full[n-1]
	if len(text) == n && text[n-1] != check {
		r.warn(path+".text", "check digit is %c, must be %c; drawn with %c", text[n-1], check, check)
	}
	return body + string(check)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// oneD encodes with a gozxing linear writer at one pixel per module and turns the modules
// into runs of mw pixels per module, with quiet modules on each side.
func oneD(w gozxing.Writer, f gozxing.BarcodeFormat, text string, hints map[gozxing.EncodeHintType]any, mw, quiet int) (lin *linear, err error) {
	defer func() {
		if p := recover(); p != nil { // a writer's bug must not end the render
			lin, err = nil, fmt.Errorf("encoder failed: %v", p)
		}
	}()
	if hints == nil {
		hints = map[gozxing.EncodeHintType]any{}
	}
	hints[gozxing.EncodeHintType_MARGIN] = 0
	bm, err := w.Encode(text, f, 0, 1, hints)
	if err != nil {
		return nil, err
	}
	var runs []int
	prev, n := true, 0
	for x := 0; x < bm.GetWidth(); x++ {
		v := bm.Get(x, 0)
		if v != prev {
			runs = append(runs, n*mw)
			prev, n = v, 0
		}
		n++
	}
	runs = append(runs, n*mw)
	if len(runs) > 0 && runs[0] == 0 { // cannot start with a space, but be safe
		runs = runs[1:]
	}
	return &linear{runs: runs, quiet: [2]int{quiet * mw, quiet * mw}}, nil
}

func (r *renderer) qr(path, content string, size *int, ecc *string) (m *matrix, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("encoder failed: %v", p)
		}
	}()
	level := decoder.ErrorCorrectionLevel_L
	switch e := label.Or(ecc, label.DefaultECCLevel); e {
	case "L":
	case "M":
		level = decoder.ErrorCorrectionLevel_M
	case "Q":
		level = decoder.ErrorCorrectionLevel_Q
	case "H":
		level = decoder.ErrorCorrectionLevel_H
	default:
		r.warn(path+".eccLevel", "eccLevel %q not known; drawn L", e)
	}
	if err := gs1ASCII(content); err != nil { // both QR Code objects are GS1's
		return nil, err
	}
	hints := map[gozxing.EncodeHintType]any{gozxing.EncodeHintType_GS1_FORMAT: true}
	if size != nil {
		s := *size
		if s < 21 || s > 177 || (s-17)%4 != 0 {
			r.warn(path+".size", "size %d is not a QR Code size (21, 25, ... 177); drawn the smallest that fits", s)
		} else {
			hints[gozxing.EncodeHintType_QR_VERSION] = (s - 17) / 4
		}
	}
	content = qrGS1Data(content)
	code, e := qrencoder.Encoder_encode(content, level, hints)
	if e != nil && hints[gozxing.EncodeHintType_QR_VERSION] != nil {
		r.warn(path+".size", "the data does not fit size %d (%v); drawn the smallest that fits", *size, e)
		delete(hints, gozxing.EncodeHintType_QR_VERSION)
		code, e = qrencoder.Encoder_encode(content, level, hints)
	}
	if e != nil {
		return nil, e
	}
	bm := code.GetMatrix()
	m = &matrix{w: bm.GetWidth(), h: bm.GetHeight(), quiet: 4}
	m.dark = make([]bool, m.w*m.h)
	for y := 0; y < m.h; y++ {
		for x := 0; x < m.w; x++ {
			m.dark[y*m.w+x] = bm.Get(x, y) == 1
		}
	}
	return m, nil
}

func (r *renderer) pdf417(o *label.PDF417, path string) (m *matrix, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("encoder failed: %v", p)
		}
	}()
	text := label.Or(o.Text, "")
	for _, u := range []struct {
		name string
		set  bool
	}{
		{"aspect", o.Aspect != nil}, {"rows", o.Rows != nil}, {"columns", o.Columns != nil},
		{"compact", label.Or(o.Compact, false)}, {"eci", o.ECI != nil}, {"debleed", o.Debleed != nil},
	} {
		if u.set {
			r.warn(path+"."+u.name, "%s is not drawn by the preview's PDF417 encoder; rows and columns are its own", u.name)
		}
	}
	level := int(pdf417.Level(len(text)))
	if o.ErrorCorrection != nil {
		if *o.ErrorCorrection < 0 || *o.ErrorCorrection > 8 {
			r.warn(path+".errorCorrection", "errorCorrection %d outside 0 to 8; drawn %d", *o.ErrorCorrection, level)
		} else {
			level = *o.ErrorCorrection
		}
	}
	if text == "" {
		return nil, fmt.Errorf("no text")
	}
	rows, err := pdf417.Encode(text, byte(level))
	if err != nil {
		return nil, err
	}
	m = &matrix{w: len(rows[0]), h: len(rows), quiet: 2}
	m.dark = make([]bool, 0, m.w*m.h)
	for _, row := range rows {
		m.dark = append(m.dark, row...)
	}
	return m, nil
}

// drawLinear draws bars of the symbol's height in its box (the anchor places the bars) and
// ITF's bearer bars around it and its quiet zones. The spaces and quiet zones are not painted,
// as a printer prints only the dark: another object's marks there stay, and are warned about
// (quietzone.go).
func (r *renderer) drawLinear(l *linear, a *label.Anchor, path string) {
	w := 0
	for _, v := range l.runs {
		w += v
	}
	b := r.box(a, w, l.heightPx, path)
	q := image.Rect(b.Min.X-l.quiet[0], b.Min.Y, b.Max.X+l.quiet[1], b.Max.Y)
	r.edge(q, path)
	black := color.RGBA{0, 0, 0, 255}
	z := &symbolZone{path: path, quiet: q, box: b}
	x := b.Min.X
	for i, v := range l.runs {
		if i%2 == 0 {
			r.fill(image.Rect(x, b.Min.Y, x+v, b.Max.Y), black)
		} else {
			z.spaces = append(z.spaces, image.Rect(x, b.Min.Y, x+v, b.Max.Y))
		}
		x += v
	}
	r.zones = append(r.zones, z)
	if l.hBear > 0 {
		r.fill(image.Rect(q.Min.X-l.vBear, q.Min.Y-l.hBear, q.Max.X+l.vBear, q.Min.Y), black)
		r.fill(image.Rect(q.Min.X-l.vBear, q.Max.Y, q.Max.X+l.vBear, q.Max.Y+l.hBear), black)
	}
	if l.vBear > 0 {
		r.fill(image.Rect(q.Min.X-l.vBear, q.Min.Y-l.hBear, q.Min.X, q.Max.Y+l.hBear), black)
		r.fill(image.Rect(q.Max.X, q.Min.Y-l.hBear, q.Max.X+l.vBear, q.Max.Y+l.hBear), black)
	}
}

// drawMatrix draws the dark modules in the symbol's box. The light modules and the quiet zone
// are not painted, as a printer prints only the dark: another object's marks there stay, and
// are warned about (quietzone.go), within the quiet zone the symbology needs even when
// quietZone is false.
func (r *renderer) drawMatrix(m *matrix, mx, my int, c color.RGBA, a *label.Anchor, path string) {
	b := r.box(a, m.w*mx, m.h*my, path)
	q := image.Rect(b.Min.X-m.quiet*mx, b.Min.Y-m.quiet*my, b.Max.X+m.quiet*mx, b.Max.Y+m.quiet*my)
	r.edge(q, path)
	r.zones = append(r.zones, &symbolZone{path: path, box: b, matrix: m, mx: mx, my: my,
		quiet: image.Rect(b.Min.X-m.need*mx, b.Min.Y-m.need*my, b.Max.X+m.need*mx, b.Max.Y+m.need*my)})
	vis := b.Intersect(r.img.Bounds())
	if vis.Empty() {
		return
	}
	for y := 0; y < m.h; y++ {
		y0 := b.Min.Y + y*my
		if y0+my <= vis.Min.Y || y0 >= vis.Max.Y {
			continue
		}
		for x := 0; x < m.w; {
			if !m.at(x, y) {
				x++
				continue
			}
			// A run of dark modules is one rectangle.
			e := x
			for e < m.w && m.at(e, y) {
				e++
			}
			r.fill(image.Rect(b.Min.X+x*mx, y0, b.Min.X+e*mx, y0+my), c)
			x = e
		}
	}
}

// edge warns when a symbol or its quiet zone runs past the label's edge: the printed symbol
// would be cut and would not scan.
func (r *renderer) edge(q image.Rectangle, path string) {
	if !q.In(r.img.Bounds()) {
		b := r.img.Bounds()
		r.warn(path, "the symbol with its quiet zone spans %.1f..%.1f x %.1f..%.1f mm, past the label's %.1f x %.1f mm: it would be cut",
			float64(q.Min.X)/r.sx, float64(q.Max.X)/r.sx, float64(q.Min.Y)/r.sy, float64(q.Max.Y)/r.sy,
			float64(b.Dx())/r.sx, float64(b.Dy())/r.sy)
	}
}
