package label

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/label/gs1"
)

// Problem is one thing wrong with a label, at a place named by the maker's property names.
type Problem struct {
	// Path is where: "objs[3].children[0].moduleSize", "width", "objs[0].apps[1]".
	Path string
	// Msg says what is wrong: "must be greater than 0", "is mandatory".
	Msg string
}

// Error returns "Path: Msg".
func (p *Problem) Error() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Problems is every problem of a label, in the order of the label.
type Problems []*Problem

// Error returns the problems one a line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (ps Problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errs
}

// ProblemsOf returns every [*Problem] in err's tree (the error of [Label.Validate] or of
// [Expand]), in order; nil when there is none.
func ProblemsOf(err error) Problems {
	var ps Problems
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case nil:
		case *Problem:
			ps = append(ps, x)
		case interface{ Unwrap() []error }:
			for _, u := range x.Unwrap() {
				walk(u)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return ps
}

// Validate checks the label before anything is sent and returns every problem at once, joined
// with errors.Join (each a [*Problem]; [ProblemsOf] lists them), or nil. It checks mandatory
// properties, the shape of every known property, enum values, numbers that must be positive or
// in a range, points, ITF, EAN-13 and UPC-A data and check digits, DataMatrix and QR sizes,
// each symbology's character set and capacity (symbology.go), the braces of dynamic text, and GS1 apps and -Plain strings against the GS1 Barcode Syntax
// Dictionary (package gs1: "objs[0].apps[1]: AI (02) needs AI (37)"). An object type or
// property close to a known one is a problem with "did you mean" (GS1128, barheight); other
// unknown objects and properties are not problems.
func (l *Label) Validate() error {
	ps := l.Problems()
	if len(ps) == 0 {
		return nil
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// Problems returns what [Label.Validate] reports, as a list.
func (l *Label) Problems() Problems {
	if l == nil {
		return Problems{{Msg: "the label is nil"}}
	}
	v := &validator{}
	v.props(l, "")
	v.mandatory("", "format", l.Format != nil, l.Extra)
	v.mandatory("", "width", l.Width != nil, l.Extra)
	v.mandatory("", "height", l.Height != nil, l.Extra)
	v.mandatory("", "objs", l.Objs != nil, l.Extra)
	if l.Format != nil && *l.Format != 3 {
		v.add("format", "must be 3")
	}
	v.atLeast("", "width", l.Width, 0)
	v.atLeast("", "height", l.Height, 0)
	v.positive("", "hdpi", l.HDPI)
	v.positive("", "vdpi", l.VDPI)
	v.positive("", "stretch", l.Stretch)
	v.enum("", "rotation", l.Rotation, "NONE", "CW90", "CW180", "CCW90")
	v.objects(l.Objs, "objs")
	v.gs1Rules(l.Objs)
	return v.ps
}

type validator struct {
	ps Problems
	// meant holds the properties a misspelt one stands for (barHeight for barheight), by
	// path, so that mandatory does not also report them missing.
	meant map[string]bool
}

func (v *validator) add(path, msg string) { v.ps = append(v.ps, &Problem{Path: path, Msg: msg}) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// props checks what every property set shares: known properties of the wrong shape (kept in
// Extra), finite numbers, and the braces of dynamic text.
func (v *validator) props(p props, path string) {
	for name := range v.misspelt(p, path) {
		if v.meant == nil {
			v.meant = map[string]bool{}
		}
		v.meant[join(path, name)] = true
	}
	fs := p.fields()
	extra := *p.extra()
	for i := range fs {
		f := &fs[i]
		// The property's path is written only for a problem: a group nested 64 levels deep
		// would otherwise write a long path for every property of every object.
		// A known property in Extra is one of the wrong shape, unless a typed value set later
		// wins over it (then the Extra entry is not written).
		if raw, ok := extra[f.name]; ok && isNil(f.ptr) {
			v.shape(join(path, f.name), f, raw)
			continue
		}
		switch ptr := f.ptr.(type) {
		case **float64:
			if *ptr != nil && (math.IsNaN(**ptr) || math.IsInf(**ptr, 0)) {
				v.add(join(path, f.name), "must be a finite number")
			}
		case *[]float64:
			for j, x := range *ptr {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					v.add(join(path, f.name)+"["+strconv.Itoa(j)+"]", "must be a finite number")
				}
			}
		case **string:
			if f.dyn && *ptr != nil {
				if msg := braces(**ptr); msg != "" {
					v.add(join(path, f.name), msg)
				}
			}
		case **Font:
			if *ptr != nil {
				v.font(*ptr, join(path, f.name))
			}
		case **Size:
			if *ptr != nil {
				v.props(*ptr, join(path, f.name))
			}
		}
	}
}

func isNil(ptr any) bool {
	switch p := ptr.(type) {
	case **float64:
		return *p == nil
	case **int:
		return *p == nil
	case **string:
		return *p == nil
	case **bool:
		return *p == nil
	case **Font:
		return *p == nil
	case **Size:
		return *p == nil
	case *[]float64:
		return *p == nil
	case *[]App:
		return *p == nil
	case *[]Object:
		return *p == nil
	}
	return true
}

// shape names what a known property kept as written should have been.
func (v *validator) shape(at string, f *field, raw json.RawMessage) {
	switch f.ptr.(type) {
	case **float64:
		if _, _, ok := decodeNumber(raw); !ok && len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
			v.add(at, "is a number out of range")
			return
		}
		v.add(at, "must be a number")
	case **int:
		v.add(at, "must be an integer")
	case **string:
		v.add(at, "must be a string")
	case **bool:
		v.add(at, "must be true or false")
	case **Font:
		v.add(at, `must be an object {"family":..,"style":..,"height":..}`)
	case **Size:
		v.add(at, `must be an object {"width":W,"height":H}`)
	case *[]float64:
		v.add(at, "must be an array of numbers")
	case *[]App:
		v.appsShape(at, raw)
	case *[]Object:
		v.add(at, "must be an array of objects")
	default:
		v.add(at, "has the wrong shape")
	}
}

// appsShape names the first entry of apps that is neither {"id":"..","value":".."} nor
// ["..",".."].
func (v *validator) appsShape(at string, raw json.RawMessage) {
	var items []json.RawMessage
	if !decodeArray(raw, &items) {
		v.add(at, `must be an array of {"id":..,"value":..} entries`)
		return
	}
	for i, it := range items {
		if _, ok := decodeApps(json.RawMessage("[" + string(it) + "]")); !ok {
			v.add(at+"["+strconv.Itoa(i)+"]", `must be {"id":"..","value":".."} or ["..",".."] with string values`)
		}
	}
}

func (v *validator) mandatory(path, name string, set bool, extra map[string]json.RawMessage) {
	if set {
		return
	}
	if _, kept := extra[name]; !kept && !v.meant[join(path, name)] {
		v.add(join(path, name), "is mandatory")
	}
}

func (v *validator) positive(path, name string, p *float64) {
	if p != nil && *p <= 0 {
		v.add(join(path, name), "must be greater than 0")
	}
}

func (v *validator) atLeast(path, name string, p *float64, min float64) {
	if p != nil && *p < min {
		v.add(join(path, name), "must be at least "+strconv.FormatFloat(min, 'f', -1, 64))
	}
}

func (v *validator) intRange(path, name string, p *int, lo, hi int) {
	if p != nil && (*p < lo || *p > hi) {
		v.add(join(path, name), "must be from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
	}
}

func (v *validator) enum(path, name string, p *string, values ...string) {
	if p == nil {
		return
	}
	for _, x := range values {
		if *p == x {
			return
		}
	}
	v.add(join(path, name), "must be one of "+strings.Join(values, ", "))
}

func (v *validator) font(f *Font, at string) {
	v.props(f, at)
	v.mandatory(at, "family", f.Family != nil, f.Extra)
	v.mandatory(at, "style", f.Style != nil, f.Extra)
	v.mandatory(at, "height", f.Height != nil, f.Extra)
	if f.Family != nil && *f.Family == "" {
		v.add(at+".family", "must not be empty")
	}
	v.positive(at, "height", f.Height)
	v.positive(at, "width", f.Width)
}

func (v *validator) objects(objs []Object, path string) {
	for i, o := range objs {
		at := path + "[" + strconv.Itoa(i) + "]"
		if nilObject(o) {
			v.add(at, "is nil")
			continue
		}
		if p, ok := o.(props); ok {
			v.props(p, at)
		}
		v.symbolData(at, o)
		switch o := o.(type) {
		case *Unknown:
			if o.Type() == "" {
				var m map[string]json.RawMessage
				if json.Unmarshal(o.Raw, &m) != nil {
					v.add(at, "must be an object")
				} else if _, ok := m["type"]; !ok {
					v.add(at+".type", "is mandatory")
				} else {
					v.add(at+".type", "must be a string")
				}
			} else {
				v.unknownType(at, o)
			}
		case *Text:
			v.mandatory(at, "text", o.Text != nil, o.Extra)
			v.mandatory(at, "font", o.Font != nil, o.Extra)
			v.mandatory(at, "color", o.Color != nil, o.Extra)
			v.atLeast(at, "width", o.Width, 0)
			v.atLeast(at, "height", o.Height, 0)
			v.enum(at, "hAlign", o.HAlign, "LEFT", "CENTER", "RIGHT", "JUSTIFIED")
			v.enum(at, "vAlign", o.VAlign, "TOP", "CENTER", "BOTTOM")
			v.enum(at, "styleFormat", o.StyleFormat, "NONE", "SIMPLE", "ADVANCED")
		case *Rect:
			v.atLeast(at, "width", o.Width, 0)
			v.atLeast(at, "height", o.Height, 0)
		case *PolyLine:
			switch {
			case o.Points == nil:
				v.mandatory(at, "points", false, o.Extra)
			case len(o.Points) < 4:
				v.add(at+".points", "must hold at least 2 points (4 numbers)")
			case len(o.Points)%2 != 0:
				v.add(at+".points", "must hold an even count of numbers (x, y pairs)")
			}
			v.atLeast(at, "lineWidth", o.LineWidth, 0)
			for j, s := range o.Segments {
				if s < 0 {
					v.add(at+".segments["+strconv.Itoa(j)+"]", "must be at least 0")
				}
			}
		case *Group:
			v.objects(o.Children, at+".children")
		case *StaticBitmap:
			v.mandatory(at, "bitmap", o.Bitmap != nil, o.Extra)
			v.mandatory(at, "width", o.Width != nil, o.Extra)
			v.mandatory(at, "height", o.Height != nil, o.Extra)
			v.positive(at, "width", o.Width)
			v.positive(at, "height", o.Height)
			if o.Bitmap != nil {
				if _, err := base64.StdEncoding.DecodeString(*o.Bitmap); err != nil {
					v.add(at+".bitmap", "must be base64: "+err.Error())
				}
			}
		case *Code128:
			v.data(at, o.Text, o.Extra)
			v.bars(at, o.BarHeight, o.BarWidth, o.Extra)
			v.enum(at, "encoding", o.Encoding, "AUTO", "A", "B", "C")
		case *GS1128:
			v.apps(at, o.Apps, o.Extra)
			v.bars(at, o.BarHeight, o.BarWidth, o.Extra)
		case *Code39:
			v.data(at, o.Text, o.Extra)
			v.bars(at, o.BarHeight, o.BarWidth, o.Extra)
			v.positive(at, "barRatio", o.BarRatio)
		case *ITF:
			v.data(at, o.Text, o.Extra)
			v.bars(at, o.BarHeight, o.BarWidth, o.Extra)
			v.positive(at, "barRatio", o.BarRatio)
			v.atLeast(at, "hBearerBar", o.HBearerBar, 0)
			v.atLeast(at, "vBearerBar", o.VBearerBar, 0)
			if o.Text != nil && !isDynamic(*o.Text) && *o.Text != "" {
				if !allDigits(*o.Text) {
					v.add(at+".text", "must be digits only")
				} else if len(*o.Text)%2 != 0 {
					v.add(at+".text", "must hold an even number of digits, not "+strconv.Itoa(len(*o.Text)))
				}
			}
		case *EAN13:
			v.data(at, o.Text, o.Extra)
			v.bars(at, o.BarHeight, o.BarWidth, o.Extra)
			v.gtin(at, o.Text, 12)
		case *UPCA:
			v.data(at, o.Text, o.Extra)
			v.bars(at, o.BarHeight, o.BarWidth, o.Extra)
			v.gtin(at, o.Text, 11)
		case *PDF417:
			v.data(at, o.Text, o.Extra)
			v.mandatory(at, "barWidth", o.BarWidth != nil, o.Extra)
			v.positive(at, "barWidth", o.BarWidth)
			v.positive(at, "aspect", o.Aspect)
			v.positive(at, "rowHeight", o.RowHeight)
			v.intRange(at, "rows", o.Rows, 3, 90)
			v.intRange(at, "columns", o.Columns, 1, 30)
			v.intRange(at, "errorCorrection", o.ErrorCorrection, 0, 8)
			v.intRange(at, "eci", o.ECI, 0, 999999)
			v.atLeast(at, "extraQuietZone", o.ExtraQuietZone, 0)
		case *DataMatrix:
			v.data(at, o.Text, o.Extra)
			v.matrix(at, o.ModuleSize, o.Size, o.ExtraQuietZone, o.Rectangular)
		case *GS1DataMatrix:
			v.apps(at, o.Apps, o.Extra)
			v.matrix(at, o.ModuleSize, o.Size, o.ExtraQuietZone, o.Rectangular)
		case *GS1DataMatrixPlain:
			v.data(at, o.Text, o.Extra)
			v.plain(at, o.Text)
			v.matrix(at, o.ModuleSize, o.Size, o.ExtraQuietZone, o.Rectangular)
		case *GS1QRCode:
			v.apps(at, o.Apps, o.Extra)
			v.qr(at, o.ModuleSize, o.Size, o.ExtraQuietZone, o.ECCLevel)
		case *GS1QRCodePlain:
			v.data(at, o.Text, o.Extra)
			v.plain(at, o.Text)
			v.qr(at, o.ModuleSize, o.Size, o.ExtraQuietZone, o.ECCLevel)
		}
	}
}

// data checks a barcode's mandatory text.
func (v *validator) data(at string, text *string, extra map[string]json.RawMessage) {
	v.mandatory(at, "text", text != nil, extra)
	if text != nil && *text == "" {
		v.add(at+".text", "must not be empty")
	}
}

func (v *validator) bars(at string, height, width *float64, extra map[string]json.RawMessage) {
	v.mandatory(at, "barHeight", height != nil, extra)
	v.positive(at, "barHeight", height)
	v.positive(at, "barWidth", width)
}

// gtin checks EAN-13 (n = 12) and UPC-A (n = 11) data: n digits, or n+1 with the right check
// digit. Dynamic text is checked by the printer once filled.
func (v *validator) gtin(at string, text *string, n int) {
	if text == nil || *text == "" || isDynamic(*text) {
		return
	}
	s := *text
	switch {
	case !allDigits(s):
		v.add(at+".text", "must be digits only")
	case len(s) != n && len(s) != n+1:
		v.add(at+".text", "must be "+strconv.Itoa(n)+" digits (the check digit is computed) or "+strconv.Itoa(n+1)+", not "+strconv.Itoa(len(s)))
	case len(s) == n+1:
		if full, err := gs1.CheckDigit(s[:n]); err == nil && s[n] != full[n] {
			v.add(at+".text", "check digit is "+string(s[n])+", must be "+string(full[n]))
		}
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (v *validator) matrix(at string, module *float64, size *Size, extraQZ *float64, rect *bool) {
	v.positive(at, "moduleSize", module)
	v.atLeast(at, "extraQuietZone", extraQZ, 0)
	if size == nil {
		return
	}
	v.mandatory(at+".size", "width", size.Width != nil, size.Extra)
	v.mandatory(at+".size", "height", size.Height != nil, size.Extra)
	if size.Width == nil || size.Height == nil {
		return
	}
	w, h := *size.Width, *size.Height
	square := w == h && w >= 10 && w <= 144 && (w <= 26 && w%2 == 0 || w > 26 && w <= 52 && (w-32)%4 == 0 && w >= 32 || w > 52 && w <= 104 && (w-64)%8 == 0 && w >= 64 || w > 104 && (w-120)%12 == 0 && w >= 120)
	rectangular := false
	for _, s := range [][2]int{{18, 8}, {32, 8}, {26, 12}, {36, 12}, {36, 16}, {48, 16}} {
		if w == s[0] && h == s[1] {
			rectangular = true
		}
	}
	switch {
	case !square && !rectangular:
		v.add(at+".size", strconv.Itoa(w)+"x"+strconv.Itoa(h)+" is not a Data Matrix (ECC 200) size")
	case rectangular && rect != nil && !*rect:
		v.add(at+".size", "is rectangular but rectangular is false")
	case square && rect != nil && *rect:
		v.add(at+".size", "is square but rectangular is true")
	}
}

func (v *validator) qr(at string, module *float64, size *int, extraQZ *float64, ecc *string) {
	v.positive(at, "moduleSize", module)
	v.atLeast(at, "extraQuietZone", extraQZ, 0)
	if size != nil && (*size < 21 || *size > 177 || (*size-17)%4 != 0) {
		v.add(at+".size", "must be a QR Code size: 21, 25, ... 177 modules (version 1 to 40)")
	}
	v.enum(at, "eccLevel", ecc, "L", "M", "Q", "H")
}

// apps checks the entries of a GS1 object: present, each with an identifier of digits and a
// value with balanced braces, then against the GS1 dictionary (gs1check.go).
func (v *validator) apps(at string, apps []App, extra map[string]json.RawMessage) {
	if apps == nil {
		v.mandatory(at, "apps", false, extra)
		return
	}
	if len(apps) == 0 {
		v.add(at+".apps", "must hold at least one element")
	}
	for i, a := range apps {
		p := at + ".apps[" + strconv.Itoa(i) + "]"
		if a.ID == "" {
			v.add(p+".id", "is mandatory")
		} else if !isDynamic(a.ID) && (!allDigits(a.ID) || len(a.ID) < 2 || len(a.ID) > 4) {
			v.add(p+".id", "must be an application identifier of 2 to 4 digits")
		}
		if msg := braces(a.ID); msg != "" {
			v.add(p+".id", msg)
		}
		if a.Value == "" {
			v.add(p+".value", "must not be empty")
		}
		if msg := braces(a.Value); msg != "" {
			v.add(p+".value", msg)
		}
	}
	v.gs1Apps(at, apps)
}

// plain checks the raw element string of a -Plain object against the GS1 dictionary
// (gs1check.go).
func (v *validator) plain(at string, text *string) {
	if text == nil || *text == "" || isDynamic(*text) {
		return
	}
	v.gs1Plain(at, *text)
}

// isDynamic reports whether s holds dynamic text, which is checked once filled.
func isDynamic(s string) bool { return strings.ContainsAny(s, "{}") }

// braces reports unbalanced dynamic-text braces in s, or "".
func braces(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return "dynamic text has a } without { at byte " + strconv.Itoa(i)
			}
			depth--
		}
	}
	if depth > 0 {
		return "dynamic text has " + strconv.Itoa(depth) + " unclosed {"
	}
	return ""
}
