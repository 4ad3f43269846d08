package label

import (
	"math"
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/label/gs1"
)

// The GS1 symbol rules: the symbol specification tables of the GS1 General Specifications
// (section 5.12.3, "GS1 symbol specification tables"), which give each application of a
// symbol its X-dimension range and minimum bar height, and GS1-128's 48 data characters
// (section 5.4.4.3). See label/README.md for the tables and how a symbol's application is
// read from its AIs.

// DefaultDPI is the resolution Warnings judges a label at when neither the caller nor the
// label (hdpi, vdpi) gives one: the preview's default.
const DefaultDPI = 300

// GS1128MaxData is the most data characters a GS1-128 symbol may hold: AIs, values and the
// FNC1 separators after variable-length values, not the leading FNC1 nor the check character.
const GS1128MaxData = 48

// GS1128MaxLengthMM is the longest a GS1-128 symbol may print, its quiet zones included, in mm
// (GS1 General Specifications 5.4.4.3); the preview, which knows a symbol's modules, warns
// past it.
const GS1128MaxLengthMM = 165.10

// symbology is a GS1 symbology as the symbol specification tables name it.
type symbology int

const (
	symGS1128 symbology = iota
	symITF14
	symEANUPC // EAN-13 and UPC-A
	symDataMatrix
	symQR
)

func (s symbology) String() string {
	return [...]string{"GS1-128", "ITF-14", "EAN-13 and UPC-A", "GS1 DataMatrix", "GS1 QR Code"}[s]
}

// sstRow is a symbology's row of one GS1 symbol specification table.
type sstRow struct {
	table   int // the table's number in section 5.12.3
	sym     symbology
	xMin    float64 // X-dimension, mm
	xTarget float64
	xMax    float64
	height  float64 // minimum bar height in mm (at xTarget when scaled); 0 for 2D symbols
	scaled  bool    // the minimum height scales with the X-dimension printed (EAN/UPC)
}

// symbolTables holds the rows this package applies, as GS1 General Specifications section
// 5.12.3 gives them (the numbering of the tables since Release 22.0): table 1, trade items
// scanned in general retail POS and not general distribution; table 2, trade items scanned
// in general distribution only; table 5, logistic units scanned in general distribution;
// table 6, regulated healthcare non-retail consumer trade items not scanned in general
// distribution; table 8, trade items scanned in retail pharmacy and general distribution or
// non-retail pharmacy and general distribution; table 9, GS1 keys GDTI, GRAI, GIAI and GLN;
// table 10, regulated healthcare retail consumer trade items scanned in retail pharmacy.
var symbolTables = []sstRow{
	{1, symEANUPC, 0.264, 0.330, 0.660, 22.85, true},
	{1, symDataMatrix, 0.375, 0.625, 0.990, 0, false},
	{1, symQR, 0.375, 0.625, 0.990, 0, false},
	{2, symGS1128, 0.495, 0.495, 1.016, 31.75, false},
	{2, symITF14, 0.495, 0.495, 1.016, 31.75, false},
	{2, symDataMatrix, 0.743, 0.743, 1.500, 0, false},
	{2, symQR, 0.743, 0.743, 1.500, 0, false},
	{5, symGS1128, 0.495, 0.495, 0.940, 31.75, false},
	{5, symDataMatrix, 0.743, 0.743, 1.500, 0, false},
	{5, symQR, 0.743, 0.743, 1.500, 0, false},
	{6, symDataMatrix, 0.254, 0.380, 0.990, 0, false},
	{8, symDataMatrix, 0.750, 0.750, 1.520, 0, false},
	{8, symQR, 0.750, 0.750, 1.520, 0, false},
	{9, symGS1128, 0.250, 0.250, 0.495, 12.70, false},
	{9, symDataMatrix, 0.380, 0.380, 0.495, 0, false},
	{9, symQR, 0.380, 0.380, 0.495, 0, false},
	{10, symDataMatrix, 0.396, 0.495, 0.990, 0, false},
}

// application is what a symbol is for, as its AIs (and the label's) say, and the tables that
// may apply to it: a symbol is warned about only when it meets none of them.
type application struct {
	name   string
	tables []int
}

var (
	appRetail     = application{"a trade item scanned at the point of sale", []int{1}}
	appTrade      = application{"a trade item in general distribution, AI (01) or (02)", []int{2}}
	appTrade2D    = application{"a trade item, AI (01)", []int{1, 2}}
	appLogistic   = application{"a logistic unit, AI (00) on the label", []int{5}}
	appHealthcare = application{"a regulated healthcare item, AI (01) with a national healthcare reimbursement number (710 to 716)", []int{6, 8, 10}}
	appKeys       = application{"a GDTI, GRAI, GIAI or GLN, AI (253), (8003), (8004) or (414)", []int{9}}
)

// symbolOf returns an object's GS1 symbology and AIs (nil for EAN/UPC and ITF-14, which carry a
// GTIN), or false when it is not a GS1 symbol this file judges. A -Plain string that cannot
// be read yet (dynamic text) or at all gives no AIs.
func symbolOf(o Object) (symbology, []string, bool) {
	ids := func(apps []App) []string {
		var ais []string
		for _, a := range apps {
			if !isDynamic(a.ID) {
				ais = append(ais, a.ID)
			}
		}
		return ais
	}
	plain := func(text *string) []string {
		if text == nil || isDynamic(*text) {
			return nil
		}
		els, err := gs1.ParseRaw(*text)
		if err != nil {
			return nil
		}
		ais := make([]string, len(els))
		for i, el := range els {
			ais[i] = el.AI
		}
		return ais
	}
	switch o := o.(type) {
	case *GS1128:
		return symGS1128, ids(o.Apps), true
	case *GS1DataMatrix:
		return symDataMatrix, ids(o.Apps), true
	case *GS1QRCode:
		return symQR, ids(o.Apps), true
	case *GS1DataMatrixPlain:
		return symDataMatrix, plain(o.Text), true
	case *GS1QRCodePlain:
		return symQR, plain(o.Text), true
	case *EAN13, *UPCA:
		return symEANUPC, nil, true
	case *ITF:
		if t := Or(o.Text, ""); len(t) == 14 && allDigits(t) {
			return symITF14, nil, true
		}
	}
	return 0, nil, false
}

// applicationOf decides a symbol's application from its AIs and whether the label carries
// an SSCC, AI (00), on any symbol (then it is a logistic label, and each of its GS1-128 and 2D
// symbols is judged as one); ok is false when no table is known to apply.
func applicationOf(sym symbology, ais []string, logistic bool) (application, bool) {
	has := func(want ...string) bool {
		for _, ai := range ais {
			for _, w := range want {
				if ai == w {
					return true
				}
			}
		}
		return false
	}
	switch sym {
	case symEANUPC:
		return appRetail, true
	case symITF14:
		return appTrade, true
	}
	switch {
	case logistic:
		return appLogistic, true
	case sym == symGS1128 && has("01", "02"):
		return appTrade, true
	case sym != symGS1128 && has("01") && has("710", "711", "712", "713", "714", "715", "716"):
		return appHealthcare, true
	case sym != symGS1128 && has("01"):
		return appTrade2D, true
	case has("253", "8003", "8004", "414"):
		return appKeys, true
	}
	return application{}, false
}

// Warnings returns where the label's GS1 symbols do not meet the GS1 General Specifications'
// symbol rules, as printed at dpi dots per inch (0 takes the label's hdpi and vdpi, else
// DefaultDPI): the X-dimension range and the minimum bar height of the symbol specification
// table of the symbol's application, decided from its AIs (a logistic unit when the label
// carries AI (00), a trade item in general distribution for (01) or (02) on a GS1-128 or an
// ITF-14, the point of sale for EAN-13 and UPC-A, healthcare or general for a GS1 DataMatrix
// or QR Code with (01); see label/README.md), and GS1-128's 48 data characters. The X-dimension
// judged is the one printed: barWidth or moduleSize rounded to whole dots, as the printer
// prints them. A label with warnings prints, but a scanner may fail to read it; they are not
// the problems of [Label.Validate]. A value of dynamic text is judged once filled ([Label.Fill]).
func (l *Label) Warnings(dpi float64) Problems {
	if l == nil {
		return nil
	}
	hdpi, vdpi := dpi, dpi
	if dpi == 0 {
		hdpi, vdpi = Or(l.HDPI, 0), Or(l.VDPI, 0)
		if hdpi == 0 {
			hdpi = vdpi
		}
		if vdpi == 0 {
			vdpi = hdpi
		}
		if hdpi == 0 {
			hdpi, vdpi = DefaultDPI, DefaultDPI
		}
	}
	if !(hdpi > 0 && hdpi <= 10000 && vdpi > 0 && vdpi <= 10000) { // Validate reports it
		return nil
	}
	logistic := false
	eachObject(l.Objs, "objs", func(o Object, _ string) bool {
		if sym, ais, ok := symbolOf(o); ok && sym != symEANUPC && sym != symITF14 {
			for _, ai := range ais {
				if ai == "00" {
					logistic = true
					return false
				}
			}
		}
		return true
	})
	w := &symbolWarner{hdpi: hdpi, vdpi: vdpi}
	eachObject(l.Objs, "objs", func(o Object, at string) bool {
		sym, ais, ok := symbolOf(o)
		if !ok {
			return true
		}
		if g, isGS1128 := o.(*GS1128); isGS1128 {
			w.gs1128Length(at, g.Apps)
		}
		app, ok := applicationOf(sym, ais, logistic)
		if !ok {
			return true
		}
		var rows []sstRow
		for _, t := range app.tables {
			for _, r := range symbolTables {
				if r.table == t && r.sym == sym {
					rows = append(rows, r)
				}
			}
		}
		if len(rows) == 0 { // each application is decided only for symbologies its tables hold
			return true
		}
		switch o := o.(type) {
		case *GS1128:
			w.linear(at, sym, app, rows, o.BarWidth, o.BarHeight)
		case *ITF:
			w.linear(at, sym, app, rows, o.BarWidth, o.BarHeight)
		case *EAN13:
			w.linear(at, sym, app, rows, o.BarWidth, o.BarHeight)
		case *UPCA:
			w.linear(at, sym, app, rows, o.BarWidth, o.BarHeight)
		case *GS1DataMatrix:
			w.matrix(at, sym, app, rows, o.ModuleSize)
		case *GS1DataMatrixPlain:
			w.matrix(at, sym, app, rows, o.ModuleSize)
		case *GS1QRCode:
			w.matrix(at, sym, app, rows, o.ModuleSize)
		case *GS1QRCodePlain:
			w.matrix(at, sym, app, rows, o.ModuleSize)
		}
		return true
	})
	return w.ps
}

type symbolWarner struct {
	hdpi, vdpi float64
	ps         Problems
}

func (w *symbolWarner) add(path, msg string) { w.ps = append(w.ps, &Problem{Path: path, Msg: msg}) }

// printed returns a length as the printer prints it, in whole dots (at least one, at most
// 2^30 as in the preview), and the dots: the preview's rounding, half away from zero.
func printed(mm, dpi float64) (float64, int) {
	v := math.Round(mm * (dpi / 25.4))
	dots := 1
	switch {
	case v >= 1<<30:
		dots = 1 << 30
	case v > 1:
		dots = int(v)
	}
	return float64(dots) * 25.4 / dpi, dots
}

// linear judges a linear symbol's X-dimension (barWidth, absent: DefaultBarDots) and bar height.
func (w *symbolWarner) linear(at string, sym symbology, app application, rows []sstRow, barWidth, barHeight *float64) {
	x := float64(DefaultBarDots) * 25.4 / w.hdpi
	how := "no barWidth: " + dotsName(DefaultBarDots)
	if barWidth != nil {
		if !(*barWidth > 0) || math.IsInf(*barWidth, 0) {
			return // Validate reports it
		}
		var dots int
		x, dots = printed(*barWidth, w.hdpi)
		how = dotsName(dots)
	}
	how += " at " + fmtNum(w.hdpi) + " dpi"
	if !w.xDimension(at+".barWidth", sym, app, rows, x, how) || barHeight == nil || !(*barHeight > 0) || math.IsInf(*barHeight, 0) {
		return
	}
	h, _ := printed(*barHeight, w.vdpi)
	// The least height of the tables whose X-dimension range holds x.
	least, table := math.Inf(1), 0
	for _, r := range rows {
		if x < r.xMin-1e-9 || x > r.xMax+1e-9 {
			continue
		}
		need := r.height
		if r.scaled {
			need = r.height * x / r.xTarget
		}
		if need < least {
			least, table = need, r.table
		}
	}
	if h < least-0.005 {
		atX := ""
		if rows[0].scaled {
			atX = " at an X-dimension of " + fmtMM(x)
		}
		w.add(at+".barHeight", "bar height "+fmtMM(h)+" is under "+fmtMM(least)+", the least GS1 symbol specification table "+strconv.Itoa(table)+
			" allows for "+sym.String()+" on "+app.name+atX)
	}
}

// matrix judges a 2D symbol's X-dimension, its module size (absent: DefaultModuleDots dots).
func (w *symbolWarner) matrix(at string, sym symbology, app application, rows []sstRow, moduleSize *float64) {
	if moduleSize != nil && (!(*moduleSize > 0) || math.IsInf(*moduleSize, 0)) {
		return // Validate reports it
	}
	x, dots := printed(ModuleMM(moduleSize, w.hdpi), w.hdpi)
	how := dotsName(dots) + " at " + fmtNum(w.hdpi) + " dpi"
	if moduleSize == nil {
		how = "no moduleSize: " + how
	}
	w.xDimension(at+".moduleSize", sym, app, rows, x, how)
}

// xDimension warns when x lies outside every row's range; it reports whether x is in one.
func (w *symbolWarner) xDimension(path string, sym symbology, app application, rows []sstRow, x float64, how string) bool {
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		if x >= r.xMin-1e-9 && x <= r.xMax+1e-9 {
			return true
		}
		lo, hi = min(lo, r.xMin), max(hi, r.xMax)
	}
	var tables []int
	for _, r := range rows {
		tables = append(tables, r.table)
	}
	what := "X-dimension " + fmtMM(x) + " (" + how + ")"
	if x < lo {
		w.add(path, what+" is under "+fmtMM(lo)+", the least GS1 symbol specification "+tableNames(tables)+allow(tables)+"for "+sym.String()+" on "+app.name)
	} else if x > hi {
		w.add(path, what+" is over "+fmtMM(hi)+", the most GS1 symbol specification "+tableNames(tables)+allow(tables)+"for "+sym.String()+" on "+app.name)
	} else {
		w.add(path, what+" is between the ranges GS1 symbol specification "+tableNames(tables)+" allow for "+sym.String()+" on "+app.name)
	}
	return false
}

// gs1128Length warns when a GS1-128's data is over GS1128MaxData characters. Data of dynamic
// text is judged once filled.
func (w *symbolWarner) gs1128Length(at string, apps []App) {
	n := 0
	for i, a := range apps {
		if isDynamic(a.ID) || isDynamic(a.Value) {
			return
		}
		n += len(a.ID) + len(a.Value)
		if i < len(apps)-1 && !gs1.PredefinedLength(a.ID) {
			n++ // FNC1 as a separator
		}
	}
	if n > GS1128MaxData {
		w.add(at+".apps", "GS1-128 data of "+strconv.Itoa(n)+" characters (AIs, values and FNC1 separators) is over the "+
			strconv.Itoa(GS1128MaxData)+" the GS1 General Specifications allow in one symbol; split it over two")
	}
}

// tableNames writes "table 5" or "tables 6, 8 and 10".
func tableNames(ts []int) string {
	var uniq []string
	for _, t := range ts {
		s := strconv.Itoa(t)
		dup := false
		for _, u := range uniq {
			dup = dup || u == s
		}
		if !dup {
			uniq = append(uniq, s)
		}
	}
	if len(uniq) == 1 {
		return "table " + uniq[0]
	}
	return "tables " + strings.Join(uniq[:len(uniq)-1], ", ") + " and " + uniq[len(uniq)-1]
}

// allow is " allows " after one table's name, " allow " after several.
func allow(ts []int) string {
	if strings.HasPrefix(tableNames(ts), "tables") {
		return " allow "
	}
	return " allows "
}

func dotsName(n int) string {
	if n == 1 {
		return "1 dot"
	}
	return strconv.Itoa(n) + " dots"
}

func fmtMM(mm float64) string { return strconv.FormatFloat(mm, 'f', 3, 64) + " mm" }

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
