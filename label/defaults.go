package label

// MaxGroupDepth is how deep Parse lets ObjectGroups nest (objs[0].children[0].children[0]...
// counts 2): a label nested deeper is refused, since reading it would cost time quadratic in
// its depth, and no printer's editor nests groups that far.
const MaxGroupDepth = 64

// The documented defaults of optional properties, for [Or]: Or(c.BarRatio, DefaultBarRatio).
const (
	// DefaultModuleDots is the module size, in printer dots, of a DataMatrix or GS1 QR Code
	// whose label leaves moduleSize out (the pages' "5 mm" read as dots; see the package doc).
	DefaultModuleDots = 5
	// DefaultBarDots is the narrowest bar, in printer dots, of a linear barcode whose label
	// leaves barWidth out (the "common barcode properties" page that would say is not found).
	DefaultBarDots = 3
	// DefaultBarRatio is Code39's and ITF's wide-to-narrow bar ratio.
	DefaultBarRatio = 2.5
	// DefaultLineWidth is a PolyLine's line width.
	DefaultLineWidth = 1.0
	// DefaultColor is the colour of PolyLine lines, PDF417 bars and 2D modules.
	DefaultColor = "black"
	// DefaultFontWidth is a Font's horizontal stretch factor.
	DefaultFontWidth = 1.0
	// DefaultEncoding is Code128's code set choice.
	DefaultEncoding = "AUTO"
	// DefaultStyleFormat is a Text's style format.
	DefaultStyleFormat = "NONE"
	// DefaultECCLevel is a GS1 QR Code's error-correction level.
	DefaultECCLevel = "L"
	// DefaultStretch is a label's stretch: none.
	DefaultStretch = 1.0
)

// ModuleMM returns the module size in mm of a DataMatrix or GS1 QR Code printed at dpi: the
// label's moduleSize when it sets one, else DefaultModuleDots printer dots (see the package
// doc for why the pages' default is read as dots).
func ModuleMM(moduleSize *float64, dpi float64) float64 {
	if moduleSize != nil {
		return *moduleSize
	}
	return DefaultModuleDots * 25.4 / dpi
}
