package preview

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labelprinter/go-labelprinter/label"
	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// FontKey names a font of a label: its family and style as the label writes them ("Arial",
// "Bold"), compared without case. A key with Style "" is the family's font for every style
// the map does not name.
type FontKey struct {
	Family, Style string
}

// FontSource is a TrueType or OpenType font: a parsed Font, or else the File it is read from.
type FontSource struct {
	// File is the path of a .ttf or .otf file, read at the first render that needs it.
	File string
	// Font is a parsed font; it wins over File.
	Font *opentype.Font
}

// LoadFont reads a TrueType or OpenType font file, for Options.Fonts.
func LoadFont(path string) (*opentype.Font, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("preview: font: %w", err)
	}
	f, err := opentype.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("preview: font %s: %w", path, err)
	}
	return f, nil
}

// goFonts are the families drawn without a warning: Go's own fonts.
var goFonts = map[string]map[string][]byte{
	"go": {"regular": goregular.TTF, "bold": gobold.TTF, "italic": goitalic.TTF, "bold italic": gobolditalic.TTF},
	"go mono": {"regular": gomono.TTF, "bold": gomonobold.TTF, "italic": gomonoitalic.TTF,
		"bold italic": gomonobolditalic.TTF},
}

// goStyle is the Go font style closest to a style name: Regular, Bold, Italic or Bold Italic.
func goStyle(style string) string {
	s := strings.ToLower(style)
	bold := strings.Contains(s, "bold") || strings.Contains(s, "black") || strings.Contains(s, "heavy")
	italic := strings.Contains(s, "italic") || strings.Contains(s, "oblique")
	switch {
	case bold && italic:
		return "bold italic"
	case bold:
		return "bold"
	case italic:
		return "italic"
	}
	return "regular"
}

var titles = map[string]string{"regular": "Go Regular", "bold": "Go Bold", "italic": "Go Italic", "bold italic": "Go Bold Italic"}

type fontEntry struct {
	f    *opentype.Font
	warn string // why this font is not the one asked for; "" when it is
}

type faceKey struct {
	f    *opentype.Font
	size float64
}

type faceEntry struct {
	face   font.Face
	ascent float64
	// latin caches what layout asks of the face for the first 256 code points, the glyph
	// drawn and its advance: a long text costs a lookup a character, not the font's tables.
	latin [256]latinGlyph
}

type latinGlyph struct {
	set, missing bool
	r            rune
	adv          fixed.Int26_6
}

// font finds the font of a family and style: the map's, Go's for the Go families, else Go's
// of the same style with a warning.
func (r *renderer) font(family, style string) *fontEntry {
	key := strings.ToLower(family) + "\x00" + strings.ToLower(style)
	if e, ok := r.fonts[key]; ok {
		return e
	}
	if r.fonts == nil {
		r.fonts = map[string]*fontEntry{}
	}
	e := r.lookupFont(family, style)
	r.fonts[key] = e
	return e
}

func (r *renderer) lookupFont(family, style string) *fontEntry {
	var src *FontSource
	var anyStyle *FontSource
	for k, v := range r.opts.Fonts {
		if !strings.EqualFold(k.Family, family) {
			continue
		}
		v := v
		if strings.EqualFold(k.Style, style) {
			src = &v
		} else if k.Style == "" {
			anyStyle = &v
		}
	}
	if src == nil {
		src = anyStyle
	}
	gs := goStyle(style)
	if src != nil {
		f := src.Font
		var err error
		if f == nil {
			f, err = LoadFont(src.File)
		}
		if err == nil {
			return &fontEntry{f: f}
		}
		return &fontEntry{f: mustGo("go", gs), warn: fmt.Sprintf("font %q %s: %v; drawn with %s", family, style, err, titles[gs])}
	}
	if fam, ok := goFonts[strings.ToLower(family)]; ok {
		s := strings.ToLower(style)
		if _, ok := fam[s]; ok {
			return &fontEntry{f: mustGo(strings.ToLower(family), s)}
		}
		return &fontEntry{f: mustGo(strings.ToLower(family), gs), warn: fmt.Sprintf("style %q of %q not known; drawn as %s", style, family, titles[gs])}
	}
	return &fontEntry{f: mustGo("go", gs), warn: fmt.Sprintf("font %q not given; drawn with %s", family, titles[gs])}
}

// mustGo parses one of Go's fonts, which are known good; nil if one ever is not, and the text
// is then not drawn (and warned about) rather than the render failing.
func mustGo(family, style string) *opentype.Font {
	f, err := opentype.Parse(goFonts[family][style])
	if err != nil {
		return nil
	}
	return f
}

func (r *renderer) face(f *opentype.Font, size float64) *faceEntry {
	if f == nil {
		return nil
	}
	k := faceKey{f, size}
	if e, ok := r.faces[k]; ok {
		return e
	}
	if r.faces == nil {
		r.faces = map[faceKey]*faceEntry{}
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil
	}
	e := &faceEntry{face: fc, ascent: float64(fc.Metrics().Ascent) / 64}
	r.faces[k] = e
	return e
}

// style is the format of a piece of text: what ADVANCED blocks and SIMPLE marks change.
type style struct {
	family, style string
	height        float64 // mm
	color         color.RGBA
}

type run struct {
	text string
	st   style
}

// runs splits a Text's text into pieces of one style, by its styleFormat.
func (r *renderer) runs(text string, base style, format, path string) []run {
	switch format {
	case "", "NONE":
		return []run{{text, base}}
	case "SIMPLE":
		var out []run
		st := base
		for {
			i := strings.IndexByte(text, '*')
			if i < 0 {
				break
			}
			out = append(out, run{text[:i], st})
			text = text[i+1:]
			if st.style == base.style {
				if goStyle(base.style) == "bold" || goStyle(base.style) == "bold italic" {
					st.style = "Regular"
				} else {
					st.style = "Bold"
				}
			} else {
				st.style = base.style
			}
		}
		return append(out, run{text, st})
	case "ADVANCED":
		return r.advanced(text, base, path)
	}
	r.warn(path+".styleFormat", "styleFormat %q not known; drawn as NONE", format)
	return []run{{text, base}}
}

// advanced reads [key="value" ...] blocks; [] restores the format before the last block.
func (r *renderer) advanced(text string, base style, path string) []run {
	var out []run
	stack := []style{base}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, run{cur.String(), stack[len(stack)-1]})
			cur.Reset()
		}
	}
	for i := 0; i < len(text); {
		if text[i] != '[' {
			cur.WriteByte(text[i])
			i++
			continue
		}
		end := strings.IndexByte(text[i:], ']')
		if end < 0 {
			cur.WriteString(text[i:])
			break
		}
		block := text[i+1 : i+end]
		i += end + 1
		flush()
		if strings.TrimSpace(block) == "" {
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		st := stack[len(stack)-1]
		for _, kv := range splitBlock(block) {
			k, v, ok := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			if !ok {
				r.warn(path+".text", "style block [%s] not understood; ignored", block)
				continue
			}
			switch k {
			case "color":
				if c, ok := parseColor(v); ok {
					st.color = c
				} else {
					r.warn(path+".text", "colour %q not known; ignored", v)
				}
			case "font-family":
				st.family = v
			case "font-style":
				st.style = v
			case "font-height":
				h, ok := parseHeight(v)
				if ok {
					st.height = h
				} else {
					r.warn(path+".text", "font-height %q not understood; ignored", v)
				}
			default:
				r.warn(path+".text", "style key %q not known to the preview; ignored", k)
			}
		}
		stack = append(stack, st)
	}
	flush()
	return out
}

// splitBlock splits key="value" pairs at spaces outside quotes.
func splitBlock(b string) []string {
	var out []string
	var cur strings.Builder
	q := false
	for _, c := range b {
		switch {
		case c == '"':
			q = !q
			cur.WriteRune(c)
		case c == ' ' && !q:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(c)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// parseHeight reads "20mm", "12pt" or a number of mm.
func parseHeight(v string) (float64, bool) {
	scale := 1.0
	switch {
	case strings.HasSuffix(v, "mm"):
		v = strings.TrimSuffix(v, "mm")
	case strings.HasSuffix(v, "pt"):
		v = strings.TrimSuffix(v, "pt")
		scale = 25.4 / 72
	}
	h, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !finite(h) || h <= 0 {
		return 0, false
	}
	return h * scale, true
}

// glyph is one character laid out: the rune drawn, its piece of text's look (an index in
// the text's looks) and its advance in pixels. It is small, as a text may hold millions.
type glyph struct {
	r    rune
	look int32
	adv  float64
}

// look is what the glyphs of a piece of text share: face, colour, size and stretch.
type look struct {
	fe      *faceEntry
	col     color.RGBA
	em      float64 // the font size in pixels, for the line's height
	stretch float64
}

// layoutGlyph returns the rune a face draws for c ('?' when its font has none, missing
// true) and its advance.
func layoutGlyph(fe *faceEntry, f *opentype.Font, buf *sfnt.Buffer, c rune) (rune, fixed.Int26_6, bool) {
	if c >= 0 && c < 256 && fe.latin[c].set {
		g := fe.latin[c]
		return g.r, g.adv, g.missing
	}
	r, missing := c, false
	adv, ok := fe.face.GlyphAdvance(c)
	if gi, err := f.GlyphIndex(buf, c); !ok || err != nil || gi == 0 {
		r, missing = '?', true // the font has no glyph for it (index 0 is .notdef)
		adv, _ = fe.face.GlyphAdvance(r)
	}
	if c >= 0 && c < 256 {
		fe.latin[c] = latinGlyph{set: true, missing: missing, r: r, adv: adv}
	}
	return r, adv, missing
}

func (r *renderer) text(o *label.Text, path string) {
	if o.Text == nil || o.Font == nil {
		r.warn(path, "Text without text or font; not drawn")
		return
	}
	f := o.Font
	base := style{family: label.Or(f.Family, "Go"), style: label.Or(f.Style, "Regular"), height: label.Or(f.Height, 3)}
	base.color = r.color(path+".color", o.Color, "black")
	if !finite(base.height) || base.height <= 0 {
		r.warn(path+".font.height", "font height %v; not drawn", base.height)
		return
	}
	stretch := label.Or(f.Width, label.DefaultFontWidth)
	if !finite(stretch) || stretch <= 0 || stretch > 10 {
		r.warn(path+".font.width", "font width %v; drawn as 1", stretch)
		stretch = 1
	}
	ls := label.Or(o.LetterSpacing, 0) * r.sx
	lineSp := label.Or(o.LineSpacing, 0) * r.sy
	if !finite(ls, lineSp) {
		ls, lineSp = 0, 0
	}
	// A glyph bigger than the image is never needed: clamp so a hostile height cannot make
	// the rasterizer allocate without bound.
	limit := float64(max(r.img.Bounds().Dx(), r.img.Bounds().Dy()))
	warned := map[string]bool{}
	width := -1.0
	if o.Width != nil && finite(*o.Width) && *o.Width > 0 {
		width = *o.Width * r.sx
	}
	// Text beyond the label's right edge is not laid out: a line that is not wrapped, starts
	// at its x (LEFT, anchored LEFT) and only moves right never comes back into view, so the
	// rest of its paragraph is skipped, however long.
	room := math.Inf(1)
	if width < 0 && label.Or(o.HAlign, "LEFT") == "LEFT" && label.Or(o.HAnchor, "LEFT") == "LEFT" && ls >= 0 {
		room = float64(r.img.Bounds().Dx()-px(label.Or(o.X, 0), r.sx)) + 1
	}
	used := 0.0 // how far the paragraph has gone
	// Nor below its bottom edge: text that hangs from its y (TOP, anchored TOP) has each
	// paragraph at least a line of the base height below the one before, so past the edge the
	// rest is not laid out.
	below := math.Inf(1)
	if label.Or(o.VAlign, "TOP") == "TOP" && label.Or(o.VAnchor, "TOP") == "TOP" && lineSp >= 0 {
		below = float64(r.img.Bounds().Dy()-px(label.Or(o.Y, 0), r.sy)) + 1
	}
	missing := ""
	var buf sfnt.Buffer
	var looks []look
	var paras [][]glyph
	var cur []glyph
layout:
	for _, rn := range r.runs(*o.Text, base, label.Or(o.StyleFormat, label.DefaultStyleFormat), path) {
		fe := r.font(rn.st.family, rn.st.style)
		if fe.warn != "" && !warned[fe.warn] {
			warned[fe.warn] = true
			r.warn(path, "%s", fe.warn)
		}
		em := rn.st.height * r.sy
		if em > limit {
			r.warn(path+".font.height", "font height %v mm is larger than the label; drawn smaller", rn.st.height)
			em = limit
		}
		if em < 1 {
			em = 1
		}
		face := r.face(fe.f, em)
		if face == nil {
			r.warn(path, "font %q %s cannot be used; text not drawn", rn.st.family, rn.st.style)
			continue
		}
		looks = append(looks, look{fe: face, col: rn.st.color, em: em, stretch: stretch})
		li := int32(len(looks) - 1)
		for i := 0; i < len(rn.text); {
			ch, n := utf8.DecodeRuneInString(rn.text[i:])
			i += n
			if ch == '\n' {
				paras = append(paras, cur)
				cur, used = nil, 0
				if float64(len(paras))*(base.height*r.sy+lineSp) > below+lineSp {
					break layout
				}
				continue
			}
			if used > room {
				// Past the edge: on to the next paragraph, leaving a space of no width
				// whose look still sizes the line, as the skipped characters would.
				if len(cur) == 0 || cur[len(cur)-1].look != li {
					cur = append(cur, glyph{r: ' ', look: li})
				}
				if j := strings.IndexByte(rn.text[i:], '\n'); j >= 0 {
					i += j
				} else {
					i = len(rn.text)
				}
				continue
			}
			c, adv, miss := layoutGlyph(face, fe.f, &buf, ch)
			if miss && len(missing) < 64 && !strings.ContainsRune(missing, ch) {
				missing += string(ch)
			}
			cur = append(cur, glyph{r: c, look: li, adv: float64(adv)/64*stretch + ls})
			used += cur[len(cur)-1].adv
		}
	}
	paras = append(paras, cur)
	if missing != "" {
		r.warn(path+".text", "characters %q are not in the font; drawn as ?", missing)
	}

	type line struct {
		g   []glyph
		w   float64
		em  float64
		end bool // the last line of its paragraph
	}
	var lines []line
	for _, p := range paras {
		if len(p) == 0 || width < 0 {
			lines = append(lines, line{g: p, w: lineWidth(p), end: true}) // wrap's one line
			continue
		}
		ls := wrap(p, width)
		for k, l := range ls {
			lines = append(lines, line{g: l, w: lineWidth(l), end: k == len(ls)-1})
		}
	}
	hAlign := label.Or(o.HAlign, "LEFT")
	boxW := 0.0
	total := 0.0
	for i := range lines {
		lines[i].em = base.height * r.sy
		for _, g := range lines[i].g {
			lines[i].em = math.Max(lines[i].em, looks[g.look].em)
		}
		boxW = math.Max(boxW, lines[i].w)
		total += lines[i].em
		if i > 0 {
			total += lineSp
		}
	}
	if width >= 0 {
		boxW = width
	}
	boxH := total
	if o.Height != nil && finite(*o.Height) && *o.Height > 0 {
		boxH = *o.Height * r.sy
	}
	b := r.box(&o.Anchor, int(math.Round(boxW)), int(math.Round(boxH)), path)
	y := float64(b.Min.Y)
	switch label.Or(o.VAlign, "TOP") {
	case "TOP":
	case "CENTER":
		y += (boxH - total) / 2
	case "BOTTOM":
		y += boxH - total
	default:
		r.warn(path+".vAlign", "vAlign %q not known; drawn TOP", *o.VAlign)
	}
	switch hAlign {
	case "LEFT", "CENTER", "RIGHT", "JUSTIFIED":
	default:
		r.warn(path+".hAlign", "hAlign %q not known; drawn LEFT", hAlign)
		hAlign = "LEFT"
	}
	// Every wrapped line but a paragraph's last is justified when asked.
	for _, l := range lines {
		x := float64(b.Min.X)
		extra := 0.0
		switch hAlign {
		case "CENTER":
			x += (boxW - l.w) / 2
		case "RIGHT":
			x += boxW - l.w
		case "JUSTIFIED":
			if !l.end {
				spaces := 0
				for _, g := range trimSpace(l.g) {
					if g.r == ' ' {
						spaces++
					}
				}
				if spaces > 0 {
					extra = (boxW - l.w) / float64(spaces)
				}
			}
		}
		asc := l.em * 0.8
		for _, g := range l.g {
			asc = math.Max(asc, looks[g.look].fe.ascent*0.8/0.93)
		}
		r.drawLine(l.g, looks, x, y+asc, extra)
		y += l.em + lineSp
	}
}

// trimSpace drops trailing spaces, which a wrapped line does not show.
func trimSpace(g []glyph) []glyph {
	for len(g) > 0 && g[len(g)-1].r == ' ' {
		g = g[:len(g)-1]
	}
	return g
}

func lineWidth(g []glyph) float64 {
	w := 0.0
	for _, c := range trimSpace(g) {
		w += c.adv
	}
	return w
}

// wrap breaks a paragraph into lines no wider than width (pixels; <0: no wrapping) at spaces;
// a word wider than the line is broken between characters.
func wrap(p []glyph, width float64) [][]glyph {
	if width < 0 || len(p) == 0 {
		return [][]glyph{p}
	}
	var lines [][]glyph
	start, lastSpace := 0, -1
	w := 0.0
	for i := 0; i < len(p); i++ {
		if p[i].r == ' ' {
			lastSpace = i
		}
		w += p[i].adv
		if w > width && p[i].r != ' ' && i > start {
			cut := i
			if lastSpace >= start {
				cut = lastSpace + 1
			}
			lines = append(lines, p[start:cut])
			start = cut
			w = 0
			for j := start; j <= i; j++ {
				w += p[j].adv
			}
			lastSpace = -1
		}
	}
	return append(lines, p[start:])
}

// drawLine draws glyphs from x along the baseline y; extra widens each space (JUSTIFIED).
func (r *renderer) drawLine(gs []glyph, looks []look, x, y float64, extra float64) {
	bounds := r.img.Bounds()
	for _, gl := range gs {
		g := struct {
			r rune
			look
			adv float64
		}{gl.r, looks[gl.look], gl.adv}
		if g.r == ' ' {
			x += g.adv + extra
			continue
		}
		// Cheap culling before the glyph is rasterized.
		if x > float64(bounds.Max.X) || x+g.adv < float64(bounds.Min.X)-g.em ||
			y-2*g.em > float64(bounds.Max.Y) || y+2*g.em < float64(bounds.Min.Y) {
			x += g.adv
			continue
		}
		dot := fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
		dr, mask, maskp, _, ok := g.fe.face.Glyph(dot, g.r)
		if ok && !dr.Empty() {
			src := image.NewUniform(g.col)
			if g.stretch == 1 {
				draw.DrawMask(r.img, dr, src, image.Point{}, mask, maskp, draw.Over)
			} else {
				// Font.width stretches glyphs horizontally about the dot.
				sw := int(math.Round(float64(dr.Dx()) * g.stretch))
				x0 := int(math.Round(x + float64(dr.Min.X-int(math.Round(x)))*g.stretch))
				sr := image.Rect(maskp.X, maskp.Y, maskp.X+dr.Dx(), maskp.Y+dr.Dy())
				dst := image.Rect(x0, dr.Min.Y, x0+max1(sw), dr.Max.Y)
				vis := dst.Intersect(bounds)
				if !vis.Empty() {
					a := image.NewAlpha(vis) // only the visible part is scaled
					xdraw.ApproxBiLinear.Scale(a, dst, mask, sr, draw.Src, nil)
					draw.DrawMask(r.img, vis, src, image.Point{}, a, vis.Min, draw.Over)
				}
			}
		}
		x += g.adv
	}
}
