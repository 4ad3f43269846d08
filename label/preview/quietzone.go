package preview

import (
	"fmt"
	"image"
	"strings"

	"github.com/labelprinter/go-labelprinter/label"
)

// The symbol rules the preview checks, knowing each symbol's modules: quiet zones and light
// parts free of other marks, and GS1-128's length.

// symbolZone is where one symbol drawn must stay free of other marks to scan: its quiet zone
// (the symbology's own: 10X for Code 128 and GS1-128, 11X and 7X for EAN-13, 1X for Data
// Matrix, 4X for QR Code, ...) and its light parts, the spaces of a linear symbol or the light
// modules of a 2D one.
type symbolZone struct {
	path   string
	quiet  image.Rectangle // the symbol's box with its quiet zone around it
	box    image.Rectangle // the symbol's box
	spaces []image.Rectangle
	matrix *matrix // light modules of a 2D symbol, of mx x my pixels from box.Min
	mx, my int
}

// zoneBudget is how many pixels checkZones reads, in images: one symbol over another is
// read again for each, so a label of many overlapping symbols would cost their count times
// the image; past it, the rest are warned about as not checked.
const zoneBudget = 4

// checkZones warns, once every object is drawn, where another object marks a symbol's quiet
// zone or its light parts: the preview leaves them unpainted, as the printer prints only the
// dark, and a scanner may not read a symbol with marks there.
func (r *renderer) checkZones() {
	bounds := r.img.Bounds()
	budget := zoneBudget * bounds.Dx() * bounds.Dy()
	for i, z := range r.zones {
		q := z.quiet.Intersect(bounds)
		if q.Dx()*q.Dy() > budget {
			r.warn(z.path, "the quiet zones of this and %d more symbols were not checked for other marks: the label's symbols cover over %d times its area", len(r.zones)-i-1, zoneBudget)
			return
		}
		budget -= q.Dx() * q.Dy()
		var quiet []string // where each side's marks are
		var inside image.Rectangle
		// The quiet zone: the rows above and below the box, and beside it.
		for _, part := range []image.Rectangle{
			image.Rect(q.Min.X, q.Min.Y, q.Max.X, z.box.Min.Y),
			image.Rect(q.Min.X, z.box.Max.Y, q.Max.X, q.Max.Y),
			image.Rect(q.Min.X, z.box.Min.Y, z.box.Min.X, z.box.Max.Y),
			image.Rect(z.box.Max.X, z.box.Min.Y, q.Max.X, z.box.Max.Y),
		} {
			if m := r.marked(part.Intersect(q)); !m.Empty() {
				quiet = append(quiet, r.mmRect(m))
			}
		}
		for _, s := range z.spaces {
			inside = inside.Union(r.marked(s.Intersect(q)))
		}
		if m := z.matrix; m != nil {
			for y := 0; y < m.h; y++ {
				for x := 0; x < m.w; x++ {
					if !m.at(x, y) {
						cell := image.Rect(z.box.Min.X+x*z.mx, z.box.Min.Y+y*z.my, z.box.Min.X+(x+1)*z.mx, z.box.Min.Y+(y+1)*z.my)
						inside = inside.Union(r.marked(cell.Intersect(q)))
					}
				}
			}
		}
		if len(quiet) > 0 {
			r.warn(z.path, "another object marks the symbol's quiet zone at %s: a scanner may not read it", strings.Join(quiet, " and "))
		}
		if !inside.Empty() {
			r.warn(z.path, "another object marks the symbol's light parts at %s: a scanner may not read it", r.mmRect(inside))
		}
	}
}

// marked returns the bounds of the pixels of b that are not the label's background.
func (r *renderer) marked(b image.Rectangle) image.Rectangle {
	var out image.Rectangle
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := r.img.Pix[r.img.PixOffset(b.Min.X, y):][:4*b.Dx()]
		for i := 0; i < len(row); i += 4 {
			if row[i] != r.bg.R || row[i+1] != r.bg.G || row[i+2] != r.bg.B || row[i+3] != r.bg.A {
				x := b.Min.X + i/4
				out = out.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return out
}

// mmRect writes a pixel rectangle as "x 10.0..12.5 mm, y 3.0..4.0 mm".
func (r *renderer) mmRect(b image.Rectangle) string {
	return fmtRange("x", float64(b.Min.X)/r.sx, float64(b.Max.X)/r.sx) + ", " + fmtRange("y", float64(b.Min.Y)/r.sy, float64(b.Max.Y)/r.sy)
}

func fmtRange(axis string, lo, hi float64) string {
	return fmt.Sprintf("%s %.1f..%.1f mm", axis, lo, hi)
}

// gs1128Length warns when a GS1-128 with its quiet zones prints longer than the GS1 General
// Specifications allow (label.GS1128MaxLengthMM).
func (r *renderer) gs1128Length(l *linear, path string) {
	w := l.quiet[0] + l.quiet[1]
	for _, v := range l.runs {
		w += v
	}
	if mm := float64(w) / r.sx; mm > label.GS1128MaxLengthMM {
		r.warn(path, "GS1-128 with its quiet zones is %.1f mm long, over the %.2f mm the GS1 General Specifications allow", mm, label.GS1128MaxLengthMM)
	}
}
