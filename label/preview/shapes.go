package preview

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"math"

	"github.com/labelprinter/go-labelprinter/label"
	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/vector"
)

// maxDashes bounds the dash pieces of the PolyLines of one render, so that patterns of tiny
// dashes along long lines cannot make a render take forever.
const maxDashes = 100_000

func (r *renderer) polyline(o *label.PolyLine, path string) {
	pts := o.Points
	if len(pts) < 4 || len(pts)%2 != 0 || !finite(pts...) {
		r.warn(path, "PolyLine needs an even number (at least 4) of finite points; not drawn")
		return
	}
	lw := label.Or(o.LineWidth, label.DefaultLineWidth)
	if !finite(lw) || lw <= 0 {
		r.warn(path+".lineWidth", "line width %v; not drawn", lw)
		return
	}
	c := r.color(path+".color", o.Color, label.DefaultColor)
	// In pixels, per axis.
	p := make([][2]float64, len(pts)/2)
	for i := range p {
		p[i] = [2]float64{pts[2*i] * r.sx, pts[2*i+1] * r.sy}
	}
	half := lw * (r.sx + r.sy) / 4
	segs := [][2][2]float64{}
	if len(o.Segments) == 0 {
		for i := 0; i+1 < len(p); i++ {
			segs = append(segs, [2][2]float64{p[i], p[i+1]})
		}
	} else {
		dash := make([]float64, len(o.Segments))
		total := 0.0
		for i, d := range o.Segments {
			if !finite(d) || d < 0 {
				r.warn(path+".segments", "dash pattern holds %v; drawn solid", d)
				dash = nil
				break
			}
			dash[i] = d * (r.sx + r.sy) / 2
			total += dash[i]
		}
		if len(dash)%2 == 1 {
			dash = append(dash, dash...) // an odd pattern repeats with on and off swapped
		}
		if dash != nil && total < 0.5 {
			r.warn(path+".segments", "dash pattern shorter than a pixel; drawn solid")
			dash = nil
		}
		if dash != nil {
			// The dashes are counted before they are cut: those of the whole render share
			// maxDashes, so that a label of many PolyLines of tiny dashes cannot make a render
			// allocate and take without bound.
			pattern, on := 0.0, float64(len(dash)/2)
			for _, d := range dash {
				pattern += d
			}
			n := float64(len(p))
			for i := 0; i+1 < len(p); i++ {
				n += math.Hypot(p[i+1][0]-p[i][0], p[i+1][1]-p[i][1]) / pattern * on
			}
			if !(n <= float64(r.dashesLeft)) {
				r.warn(path+".segments", "more than %d dashes in the label; drawn solid", maxDashes)
				dash = nil
			}
		}
		segs = dashed(p, dash, r.dashesLeft)
		if segs == nil {
			r.warn(path+".segments", "more than %d dashes in the label; drawn solid", maxDashes)
			segs = dashed(p, nil, 0)
		}
		if dash != nil {
			r.dashesLeft -= len(segs)
		}
	}
	// The rasterizer covers only the line's bounds, clipped to the image.
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, q := range p {
		minX, maxX = math.Min(minX, q[0]), math.Max(maxX, q[0])
		minY, maxY = math.Min(minY, q[1]), math.Max(maxY, q[1])
	}
	bb := image.Rect(int(math.Floor(minX-half-1)), int(math.Floor(minY-half-1)),
		int(math.Ceil(maxX+half+1)), int(math.Ceil(maxY+half+1))).Intersect(r.img.Bounds())
	if bb.Empty() {
		return
	}
	// One rasterizer for the whole render, its buffers reused: each PolyLine would otherwise
	// allocate a buffer of its box, the whole label for a diagonal.
	if r.ras == nil {
		r.ras = vector.NewRasterizer(bb.Dx(), bb.Dy())
	} else {
		r.ras.Reset(bb.Dx(), bb.Dy())
	}
	ras := r.ras
	ox, oy := float64(bb.Min.X), float64(bb.Min.Y)
	// Each piece of the stroke is clipped to the raster (and a pixel around it) before it is
	// drawn: the rasterizer's work grows with the length of the edges it is given, and a point
	// kilometres off the label would cost it minutes. Clipping a convex piece to a box keeps
	// its area inside the box, so the pixels drawn are the same.
	clip := [4]float64{ox - 1, oy - 1, float64(bb.Max.X) + 1, float64(bb.Max.Y) + 1}
	var poly, tmp [][2]float64
	add := func(q [4][2]float64) {
		poly, tmp = clipPolygon(append(poly[:0], q[:]...), tmp, clip)
		if len(poly) < 3 {
			return
		}
		ras.MoveTo(float32(poly[0][0]-ox), float32(poly[0][1]-oy))
		for _, v := range poly[1:] {
			ras.LineTo(float32(v[0]-ox), float32(v[1]-oy))
		}
		ras.ClosePath()
	}
	for _, s := range segs {
		a, b := s[0], s[1]
		dx, dy := b[0]-a[0], b[1]-a[1]
		n := math.Hypot(dx, dy)
		if n == 0 {
			continue
		}
		nx, ny := -dy/n*half, dx/n*half
		q := [4][2]float64{{a[0] + nx, a[1] + ny}, {b[0] + nx, b[1] + ny}, {b[0] - nx, b[1] - ny}, {a[0] - nx, a[1] - ny}}
		if finite(q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1], q[3][0], q[3][1]) {
			add(q)
		}
	}
	if len(o.Segments) == 0 {
		// Square joins between solid segments: a square of the line width at each inner point.
		for _, c := range p[1 : len(p)-1] {
			q := [4][2]float64{{c[0] - half, c[1] - half}, {c[0] + half, c[1] - half}, {c[0] + half, c[1] + half}, {c[0] - half, c[1] + half}}
			if finite(q[0][0], q[0][1], q[2][0], q[2][1]) {
				add(q)
			}
		}
	}
	ras.DrawOp = draw.Over
	ras.Draw(r.img, bb, image.NewUniform(c), image.Point{})
}

// clipPolygon clips the convex polygon p to the box {minX, minY, maxX, maxY} (Sutherland-
// Hodgman), using tmp as scratch; it returns the clipped polygon (fewer than 3 points when
// nothing is left) and the scratch to reuse.
func clipPolygon(p, tmp [][2]float64, box [4]float64) ([][2]float64, [][2]float64) {
	for edge := 0; edge < 4 && len(p) > 0; edge++ {
		axis, lim, low := edge%2, box[edge], edge < 2
		inside := func(v [2]float64) bool {
			if low {
				return v[axis] >= lim
			}
			return v[axis] <= lim
		}
		tmp = tmp[:0]
		prev := p[len(p)-1]
		for _, cur := range p {
			cin, pin := inside(cur), inside(prev)
			if cin != pin {
				t := (lim - prev[axis]) / (cur[axis] - prev[axis])
				var v [2]float64
				v[axis] = lim
				v[1-axis] = prev[1-axis] + t*(cur[1-axis]-prev[1-axis])
				tmp = append(tmp, v)
			}
			if cin {
				tmp = append(tmp, cur)
			}
			prev = cur
		}
		p, tmp = tmp, p
	}
	return p, tmp
}

// dashed cuts the polyline p into the "on" pieces of the dash pattern (lengths in pixels,
// on, off, ...), carried over the corners; nil when there would be more than limit.
func dashed(p [][2]float64, dash []float64, limit int) [][2][2]float64 {
	var out [][2][2]float64
	if dash == nil {
		for i := 0; i+1 < len(p); i++ {
			out = append(out, [2][2]float64{p[i], p[i+1]})
		}
		return out
	}
	k, left := 0, dash[0]
	on := true
	for i := 0; i+1 < len(p); i++ {
		a, b := p[i], p[i+1]
		n := math.Hypot(b[0]-a[0], b[1]-a[1])
		pos := 0.0
		for pos < n {
			step := math.Min(left, n-pos)
			if on && step > 0 {
				t0, t1 := pos/n, (pos+step)/n
				out = append(out, [2][2]float64{
					{a[0] + (b[0]-a[0])*t0, a[1] + (b[1]-a[1])*t0},
					{a[0] + (b[0]-a[0])*t1, a[1] + (b[1]-a[1])*t1},
				})
				if len(out) > limit {
					return nil
				}
			}
			pos += step
			left -= step
			if left <= 1e-9 {
				k = (k + 1) % len(dash)
				left = dash[k]
				on = k%2 == 0
			}
		}
	}
	return out
}

func (r *renderer) bitmap(o *label.StaticBitmap, path string) {
	if o.Width == nil || o.Height == nil || o.Bitmap == nil {
		r.warn(path, "StaticBitmap without bitmap, width or height; not drawn")
		return
	}
	b := r.mmBox(&o.Anchor, *o.Width, *o.Height, path)
	if b.Empty() {
		return
	}
	vis := b.Intersect(r.img.Bounds())
	img, scaled, err := r.decodeBitmap(*o.Bitmap, b, vis)
	if err != "" {
		r.mark(b)
		r.warn(path+".bitmap", "%s; drawn as a marked box", err)
		return
	}
	var fg, bg *color.RGBA
	if o.FgColor != nil {
		c := r.color(path+".fgColor", o.FgColor, "black")
		fg = &c
	}
	if o.BgColor != nil {
		c := r.color(path+".bgColor", o.BgColor, "white")
		bg = &c
	}
	if vis.Empty() {
		return
	}
	if scaled == nil {
		// Scaled to the box by nearest neighbour, as a printer prints dots.
		// Only the visible part is scaled: a box far larger than the label costs nothing more.
		scaled = image.NewRGBA(vis)
		xdraw.NearestNeighbor.Scale(scaled, b, img, img.Bounds(), draw.Src, nil)
	}
	if fg == nil && bg == nil {
		draw.Draw(r.img, vis, scaled, vis.Min, draw.Over)
		return
	}
	// With fgColor or bgColor the bitmap is one bit deep: a dark opaque pixel is foreground
	// (fgColor, else black), any other is background (bgColor, else no ink).
	black := color.RGBA{0, 0, 0, 255}
	if fg == nil {
		fg = &black
	}
	for y := vis.Min.Y; y < vis.Max.Y; y++ {
		for x := vis.Min.X; x < vis.Max.X; x++ {
			i := scaled.PixOffset(x, y)
			s := scaled.Pix[i : i+4]
			lum := (299*int(s[0]) + 587*int(s[1]) + 114*int(s[2])) / 1000
			dark := s[3] >= 128 && lum*255 < 128*int(s[3])
			var c *color.RGBA
			if dark {
				c = fg
			} else {
				c = bg
			}
			if c != nil && c.A != 0 {
				j := r.img.PixOffset(x, y)
				copy(r.img.Pix[j:j+4], []byte{c.R, c.G, c.B, 255})
			}
		}
	}
}

// decodeBitmap reads a StaticBitmap's PNG, or, when bitmap is not base64 PNG, the image
// stored under that name through the image resolver, decoded by decodeImage; it returns why
// not when it cannot.
func (r *renderer) decodeBitmap(s string, box, vis image.Rectangle) (image.Image, *image.RGBA, string) {
	data, err := base64.StdEncoding.DecodeString(s)
	if err == nil && bytes.HasPrefix(data, []byte("\x89PNG")) {
		img, pic, err := r.decodeImage(data, box, vis)
		switch {
		case errors.Is(err, errOverCap):
			return nil, nil, "bitmap is larger than the pixel cap"
		case err != nil:
			return nil, nil, "bitmap is not a PNG the preview can read (" + err.Error() + ")"
		}
		return img, pic, ""
	}
	return r.storedImage(s, box, vis)
}

// errOverCap is an image of more pixels than Options.MaxPixels.
var errOverCap = errors.New("larger than the pixel cap")

// decodeImage decodes an encoded image as a StaticBitmap in box prints it, its size checked
// against the pixel cap before anything is allocated for its pixels. A PNG is read a row at a
// time into the picture of its visible part vis (see decodePNGScaled), returned as pic: at
// most at the size it prints. An interlaced PNG, a JPEG or a TIFF is decoded whole, within
// the cap, returned as img. Both are nil when nothing of it shows.
func (r *renderer) decodeImage(data []byte, box, vis image.Rectangle) (img image.Image, pic *image.RGBA, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	if int64(cfg.Width)*int64(cfg.Height) > r.maxPixels() {
		return nil, nil, errOverCap
	}
	if vis.Empty() {
		return nil, nil, nil // nothing of it shows
	}
	if format == "png" {
		if pic, err := decodePNGScaled(data, box, vis); err == nil {
			return nil, pic, nil
		}
		// An interlaced PNG, or one the row reader refuses: decoded whole, which says why
		// when it cannot be read.
	}
	img, _, err = image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	return img, nil, nil
}

func (r *renderer) maxPixels() int64 {
	if r.opts.MaxPixels > 0 {
		return r.opts.MaxPixels
	}
	return DefaultMaxPixels
}
