package preview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/label"
	"golang.org/x/image/vector"
)

// DefaultDPI is the resolution of a preview when neither the options nor the label set one.
const DefaultDPI = label.DefaultDPI

// DefaultMaxPixels is the largest image Render makes when Options.MaxPixels is 0: 64
// megapixels, 256 MiB of RGBA.
const DefaultMaxPixels = 64_000_000

// Options says how a label is drawn. The zero value (or nil) draws at the label's resolution
// (else 300 dpi) with Go's fonts, the clock's dynamic text and no stored images.
type Options struct {
	// DPI is the resolution on both axes in dots per inch; 0 takes the label's hdpi and vdpi,
	// else DefaultDPI.
	DPI float64
	// Env fills dynamic text (clock, variables, counters, shift codes, a table row) by
	// label.Expand; nil fills it at the current time with nothing else.
	Env *label.Env
	// Fonts maps a family and style of the label to a font; a family not in it is drawn with
	// Go's font of the same style and warned about (see FontKey).
	Fonts map[FontKey]FontSource
	// Images gives a stored image by name (see ImagesFrom); nil gives none.
	Images ImageResolver
	// MaxPixels caps the image's pixel count (width x height); 0 is DefaultMaxPixels. A label
	// that would be larger is refused with an error before anything is allocated.
	MaxPixels int64
}

// Warning is something the preview could not draw as the label asks: the object's place in
// the label's property names and what was drawn instead.
type Warning struct {
	// Path is the place, e.g. "objs[4]" or "objs[2].children[0].text"; "" for the label.
	Path string
	// Msg says what was not drawn as asked, and what was drawn instead.
	Msg string
}

// String returns "objs[4]: font "Arial Narrow" not given; drawn with Go Regular".
func (w Warning) String() string {
	if w.Path == "" {
		return w.Msg
	}
	return w.Path + ": " + w.Msg
}

// Warnings are the warnings of one render, in the order of the label's objects.
type Warnings []Warning

// String returns the warnings one a line.
func (ws Warnings) String() string {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(w.String())
	}
	return b.String()
}

// ErrTooLarge is returned (wrapped) when a label's image would exceed Options.MaxPixels.
var ErrTooLarge = errors.New("preview: image too large")

// Render draws the label as the printer would print it, approximately (see the package doc):
// an RGBA image of width x dpi / 25.4 by height x dpi / 25.4 pixels (rotated by the label's
// rotation), what could not be drawn as asked, and an error only when there is no image to
// give (no label, no size, over the pixel cap).
func Render(l *label.Label, opts *Options) (*image.RGBA, Warnings, error) {
	return RenderContext(context.Background(), l, opts)
}

// RenderContext is Render with the context the image resolver is called with.
func RenderContext(ctx context.Context, l *label.Label, opts *Options) (*image.RGBA, Warnings, error) {
	if l == nil {
		return nil, nil, errors.New("preview: no label")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	r := &renderer{ctx: ctx, opts: &o, dashesLeft: maxDashes}
	filled, err := l.Fill(o.Env)
	if filled == nil {
		return nil, nil, fmt.Errorf("preview: %w", err)
	}
	for _, p := range label.ProblemsOf(err) {
		r.warn(p.Path, "%s; shown as written", p.Msg)
	}
	if err := r.setup(filled); err != nil {
		return nil, r.warns, err
	}
	r.objects(filled.Objs, "objs")
	r.checkZones()
	img := r.rotate(filled)
	sortWarnings(r.warns)
	return img, r.warns, nil
}

// PNG renders the label (see Render) and writes it to w as a PNG, returning the warnings.
func PNG(w io.Writer, l *label.Label, opts *Options) (Warnings, error) {
	img, warns, err := Render(l, opts)
	if err != nil {
		return warns, err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return warns, enc.Encode(w, img)
}

type renderer struct {
	ctx    context.Context
	opts   *Options
	img    *image.RGBA
	sx, sy float64 // pixels per mm
	dpiX   float64
	dpiY   float64
	bg     color.RGBA
	warns  Warnings
	zones  []*symbolZone // each symbol drawn, for checkZones
	faces  map[faceKey]*faceEntry
	fonts  map[string]*fontEntry
	ras    *vector.Rasterizer // the PolyLines' rasterizer, reused
	// dashesLeft is how many more dash pieces the render's PolyLines may cut (maxDashes in all).
	dashesLeft int
	stored     storedImages // the stored images decoded so far (storedimages.go)
}

func (r *renderer) warn(path, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	r.warns = append(r.warns, Warning{Path: path, Msg: msg})
}

// px converts a length in mm to pixels at scale s: the one rounding rule of the preview
// (half away from zero), clamped so that a hostile length cannot overflow.
func px(mm, s float64) int {
	v := mm * s
	if math.IsNaN(v) {
		return 0
	}
	const lim = 1 << 30
	if v > lim {
		return lim
	}
	if v < -lim {
		return -lim
	}
	return int(math.Round(v))
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func (r *renderer) setup(l *label.Label) error {
	r.dpiX, r.dpiY = r.opts.DPI, r.opts.DPI
	if r.opts.DPI == 0 {
		r.dpiX, r.dpiY = label.Or(l.HDPI, DefaultDPI), label.Or(l.VDPI, DefaultDPI)
		if l.HDPI != nil && l.VDPI == nil {
			r.dpiY = r.dpiX
		}
		if l.VDPI != nil && l.HDPI == nil {
			r.dpiX = r.dpiY
		}
	}
	for _, d := range []float64{r.dpiX, r.dpiY} {
		if !finite(d) || d <= 0 || d > 10000 {
			return fmt.Errorf("preview: resolution %v dpi: must be above 0 and at most 10000", d)
		}
	}
	r.sx, r.sy = r.dpiX/25.4, r.dpiY/25.4
	if l.Width == nil || l.Height == nil {
		return errors.New("preview: the label has no width or height")
	}
	w, h := *l.Width, *l.Height
	if !finite(w, h) || w <= 0 || h <= 0 {
		return fmt.Errorf("preview: label size %v x %v mm: the preview needs a size above 0 (0 lets the printer compute it)", w, h)
	}
	max := r.opts.MaxPixels
	if max <= 0 {
		max = DefaultMaxPixels
	}
	fw, fh := math.Round(w*r.sx), math.Round(h*r.sy)
	if fw < 1 || fh < 1 {
		return fmt.Errorf("preview: %v x %v mm at %v x %v dpi is %.0f x %.0f pixels: nothing to draw", w, h, r.dpiX, r.dpiY, fw, fh)
	}
	if fw*fh > float64(max) {
		return fmt.Errorf("%w: %v x %v mm at %v x %v dpi is %.0f x %.0f pixels, over the cap of %d (Options.MaxPixels)",
			ErrTooLarge, w, h, r.dpiX, r.dpiY, fw, fh, max)
	}
	pw, ph := int(fw), int(fh)
	r.img = image.NewRGBA(image.Rect(0, 0, pw, ph))
	r.bg = color.RGBA{255, 255, 255, 255}
	if l.BgColor != nil {
		if c, ok := parseColor(*l.BgColor); ok {
			r.bg = c
		} else {
			r.warn("bgColor", "colour %q not known; drawn white", *l.BgColor)
		}
	}
	draw.Draw(r.img, r.img.Bounds(), image.NewUniform(r.bg), image.Point{}, draw.Src)
	if s := label.Or(l.Stretch, label.DefaultStretch); s != 1 {
		r.warn("stretch", "stretch %v not drawn (how the printer stretches is not documented)", s)
	}
	r.extra("", l, l.Extra)
	return nil
}

func max1(v int) int {
	if v < 1 {
		return 1
	}
	return v
}

// rotate turns the drawn label by its rotation, as it comes out of the printer.
func (r *renderer) rotate(l *label.Label) *image.RGBA {
	rot := label.Or(l.Rotation, "NONE")
	src := r.img
	b := src.Bounds()
	var dst *image.RGBA
	switch rot {
	case "NONE", "":
		return src
	case "CW180":
		dst = image.NewRGBA(b)
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				copy(dst.Pix[dst.PixOffset(b.Dx()-1-x, b.Dy()-1-y):][:4], src.Pix[src.PixOffset(x, y):][:4])
			}
		}
	case "CW90", "CCW90":
		dst = image.NewRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				var dx, dy int
				if rot == "CW90" {
					dx, dy = b.Dy()-1-y, x
				} else {
					dx, dy = y, b.Dx()-1-x
				}
				copy(dst.Pix[dst.PixOffset(dx, dy):][:4], src.Pix[src.PixOffset(x, y):][:4])
			}
		}
	default:
		r.warn("rotation", "rotation %q not known; drawn without rotation", rot)
		return src
	}
	return dst
}

// extra warns about the properties of owner kept in its Extra, which the preview does not
// draw: ones it does not know, and known ones written in the wrong shape, said as such.
func (r *renderer) extra(path string, owner any, extra map[string]json.RawMessage) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		if label.HasProperty(owner, k) {
			r.warn(p, "property of the wrong shape; ignored (labelctl labels lint says what it must be)")
			continue
		}
		r.warn(p, "property not known to the preview; ignored")
	}
}

func (r *renderer) objects(objs []label.Object, path string) {
	for i, o := range objs {
		at := path + "[" + strconv.Itoa(i) + "]"
		if o == nil {
			continue
		}
		if e := extraOf(o); len(e) > 0 {
			r.extra(at, o, e)
		}
		switch o := o.(type) {
		case *label.Group:
			r.objects(o.Children, at+".children")
		case *label.Rect:
			r.rect(o, at)
		case *label.PolyLine:
			r.polyline(o, at)
		case *label.StaticBitmap:
			r.bitmap(o, at)
		case *label.Text:
			r.text(o, at)
		case *label.Unknown:
			r.unknown(o, at)
		default:
			r.barcode(o, at)
		}
	}
}

// extraOf returns an object's Extra (every type of package label has one but Unknown).
func extraOf(o label.Object) map[string]json.RawMessage {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	f := v.Elem().FieldByName("Extra")
	if !f.IsValid() || f.Kind() != reflect.Map {
		return nil
	}
	out := make(map[string]json.RawMessage, f.Len())
	it := f.MapRange()
	for it.Next() {
		out[it.Key().String()] = it.Value().Bytes()
	}
	return out
}

// box places a box of w x h pixels by an object's anchor: the point of the box named by
// hAnchor and vAnchor is at x, y.
func (r *renderer) box(a *label.Anchor, w, h int, path string) image.Rectangle {
	x, y := label.Or(a.X, 0), label.Or(a.Y, 0)
	if !finite(x, y) {
		r.warn(path, "position not finite; drawn at 0, 0")
		x, y = 0, 0
	}
	x0, y0 := px(x, r.sx), px(y, r.sy)
	x0 -= anchorShift(r, a.HAnchor, w, "LEFT", "RIGHT", path, "hAnchor")
	y0 -= anchorShift(r, a.VAnchor, h, "TOP", "BOTTOM", path, "vAnchor")
	return image.Rect(x0, y0, x0+w, y0+h)
}

// mmBox places a box given in mm, its edges rounded by px so that a 20 mm square at 10 mm
// covers the pixels of 10 mm to 30 mm.
func (r *renderer) mmBox(a *label.Anchor, w, h float64, path string) image.Rectangle {
	x, y := label.Or(a.X, 0), label.Or(a.Y, 0)
	if !finite(x, y, w, h) {
		r.warn(path, "position or size not finite; not drawn")
		return image.Rectangle{}
	}
	x -= w * anchorFrac(r, a.HAnchor, "LEFT", "RIGHT", path, "hAnchor")
	y -= h * anchorFrac(r, a.VAnchor, "TOP", "BOTTOM", path, "vAnchor")
	return image.Rect(px(x, r.sx), px(y, r.sy), px(x+w, r.sx), px(y+h, r.sy))
}

// anchorFrac is where along the box an anchor value puts the point x, y; path and prop name
// the property for a warning, joined only then.
func anchorFrac(r *renderer, v *string, start, end, path, prop string) float64 {
	if v == nil {
		return 0
	}
	switch *v {
	case start:
		return 0
	case "CENTER":
		return 0.5
	case end:
		return 1
	}
	r.warn(path+"."+prop, "anchor %q not known; drawn as %s", *v, start)
	return 0
}

func anchorShift(r *renderer, v *string, n int, start, end, path, prop string) int {
	f := anchorFrac(r, v, start, end, path, prop)
	return int(math.Round(float64(n) * f))
}

// fill paints rectangle b (clipped to the image) with c, blending when c is translucent.
func (r *renderer) fill(b image.Rectangle, c color.RGBA) {
	b = b.Intersect(r.img.Bounds())
	if b.Empty() || c.A == 0 {
		return
	}
	if c.A == 255 {
		// A row at a time: the hot path of bars and modules.
		row := r.img.Pix[r.img.PixOffset(b.Min.X, b.Min.Y):][:4*b.Dx()]
		for i := 0; i < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, 255
		}
		for y := b.Min.Y + 1; y < b.Max.Y; y++ {
			copy(r.img.Pix[r.img.PixOffset(b.Min.X, y):][:4*b.Dx()], row)
		}
		return
	}
	draw.Draw(r.img, b, image.NewUniform(c), image.Point{}, draw.Over)
}

func (r *renderer) color(path string, s *string, def string) color.RGBA {
	v := def
	if s != nil {
		v = *s
	}
	c, ok := parseColor(v)
	if !ok {
		r.warn(path, "colour %q not known; drawn %s", v, def)
		c, _ = parseColor(def)
	}
	return c
}

func (r *renderer) rect(o *label.Rect, path string) {
	if o.Width == nil || o.Height == nil {
		r.warn(path, "Rect without width or height; not drawn")
		return
	}
	c := r.color(path+".fillColor", o.FillColor, "black")
	r.fill(r.mmBox(&o.Anchor, *o.Width, *o.Height, path), c)
}

var markColor = color.RGBA{255, 0, 255, 255}

// mark draws the marked box of an object the preview could not draw: a magenta outline and
// its diagonals.
func (r *renderer) mark(b image.Rectangle) {
	if b.Empty() {
		return
	}
	t := max1(px(0.3, r.sx))
	r.fill(image.Rect(b.Min.X, b.Min.Y, b.Max.X, b.Min.Y+t), markColor)
	r.fill(image.Rect(b.Min.X, b.Max.Y-t, b.Max.X, b.Max.Y), markColor)
	r.fill(image.Rect(b.Min.X, b.Min.Y, b.Min.X+t, b.Max.Y), markColor)
	r.fill(image.Rect(b.Max.X-t, b.Min.Y, b.Max.X, b.Max.Y), markColor)
	vis := b.Intersect(r.img.Bounds())
	if vis.Empty() {
		return
	}
	n := max1(b.Dx())
	// Only the visible columns: a hostile box may be a billion pixels wide.
	for i := max(0, vis.Min.X-b.Min.X); i < min(n, vis.Max.X-b.Min.X); i++ {
		x := b.Min.X + i
		y1 := b.Min.Y + i*b.Dy()/n
		y2 := b.Max.Y - 1 - i*b.Dy()/n
		r.fill(image.Rect(x, y1, x+t, y1+t), markColor)
		r.fill(image.Rect(x, y2-t+1, x+t, y2+1), markColor)
	}
}

// unknown draws an object of a type the preview does not know as a marked box where its x,
// y, width and height say, and warns.
func (r *renderer) unknown(o *label.Unknown, path string) {
	typ := o.Type()
	var g struct {
		X, Y, Width, Height *float64
		HAnchor             *string `json:"hAnchor"`
		VAnchor             *string `json:"vAnchor"`
	}
	_ = json.Unmarshal(o.Raw, &g)
	if g.Width == nil || g.Height == nil || g.X == nil || g.Y == nil {
		r.warn(path, "object type %q not known to the preview and without x, y, width and height; not drawn", typ)
		return
	}
	a := label.Anchor{X: g.X, Y: g.Y, HAnchor: g.HAnchor, VAnchor: g.VAnchor}
	r.mark(r.mmBox(&a, *g.Width, *g.Height, path))
	r.warn(path, "object type %q not known to the preview; drawn as a marked box", typ)
}

// sortWarnings puts the warnings in the order of the objects they are about (the label's own
// first), keeping the order of each object's warnings.
//
// Each warning's place is read once, not at each comparison: under 64 nested groups a place
// has 64 indexes, and the sort compares each warning about log2(n) times.
func sortWarnings(ws Warnings) {
	type placed struct {
		w     Warning
		place []int
	}
	ps := make([]placed, len(ws))
	for i, w := range ws {
		ps[i] = placed{w, placeOf(w.Path)}
	}
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].place, ps[j].place
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
	for i := range ps {
		ws[i] = ps[i].w
	}
}

// placeOf returns the object indexes of a path: objs[2].children[0].text is 2, 0.
func placeOf(path string) []int {
	if !strings.HasPrefix(path, "objs[") {
		return nil
	}
	var idx []int
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			return idx
		}
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			return idx
		}
		n, err := strconv.Atoi(path[i+1 : i+j])
		if err != nil {
			return idx
		}
		idx = append(idx, n)
		path = path[i+j+1:]
		if !strings.HasPrefix(path, ".children[") {
			return idx
		}
	}
}
