package label

import "encoding/json"

// The maker's type names, as written in an object's "type".
const (
	TypeText               = "Text"
	TypeRect               = "Rect"
	TypePolyLine           = "PolyLine"
	TypeGroup              = "ObjectGroup"
	TypeStaticBitmap       = "StaticBitmap"
	TypeCode128            = "Code128"
	TypeGS1128             = "GS1-128"
	TypeCode39             = "Code39"
	TypeITF                = "ITF"
	TypeEAN13              = "EAN-13"
	TypeUPCA               = "UPC-A"
	TypePDF417             = "PDF417"
	TypeDataMatrix         = "DataMatrix"
	TypeGS1DataMatrix      = "GS1-DataMatrix"
	TypeGS1DataMatrixPlain = "GS1-DataMatrix-Plain"
	TypeGS1QRCode          = "GS1-QRCode"
	TypeGS1QRCodePlain     = "GS1-QRCode-Plain"
)

// Text draws a line or block of text in an installed font. Its type is "Text".
type Text struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the text, dynamic text allowed. Mandatory.
	Text *string
	// Font is the font. Mandatory.
	Font *Font
	// Color is the text colour, dynamic text allowed. Mandatory.
	Color *string
	// Width is the box width in mm; when set the text wraps, else the box grows.
	Width *float64
	// Height is the box height in mm.
	Height *float64
	// HAlign is LEFT, CENTER, RIGHT or JUSTIFIED.
	HAlign *string
	// VAlign is TOP, CENTER or BOTTOM.
	VAlign *string
	// LetterSpacing is extra space between letters, may be negative.
	LetterSpacing *float64
	// LineSpacing is extra space between lines, may be negative.
	LineSpacing *float64
	// StyleFormat is NONE (the default), SIMPLE or ADVANCED.
	StyleFormat *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "Text".
func (*Text) Type() string { return TypeText }

// MarshalJSON writes the object with its type and every property that is set.
func (o Text) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeText, &o) }

func (*Text) object() {}

func (o *Text) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *Text) literals() *map[string]lit { return &o.lits }

func (o *Text) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "font", ptr: &o.Font},
		field{name: "color", ptr: &o.Color, dyn: true},
		field{name: "width", ptr: &o.Width},
		field{name: "height", ptr: &o.Height},
		field{name: "hAlign", ptr: &o.HAlign},
		field{name: "vAlign", ptr: &o.VAlign},
		field{name: "letterSpacing", ptr: &o.LetterSpacing},
		field{name: "lineSpacing", ptr: &o.LineSpacing},
		field{name: "styleFormat", ptr: &o.StyleFormat},
	)
}

// Rect draws a rectangle. The maker's page for it was not found: the properties below are those of its example; any other is kept in Extra. Its type is "Rect".
type Rect struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Width is the width in mm.
	Width *float64
	// Height is the height in mm.
	Height *float64
	// FillColor is the fill colour.
	FillColor *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "Rect".
func (*Rect) Type() string { return TypeRect }

// MarshalJSON writes the object with its type and every property that is set.
func (o Rect) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeRect, &o) }

func (*Rect) object() {}

func (o *Rect) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *Rect) literals() *map[string]lit { return &o.lits }

func (o *Rect) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "width", ptr: &o.Width},
		field{name: "height", ptr: &o.Height},
		field{name: "fillColor", ptr: &o.FillColor, dyn: true},
	)
}

// PolyLine draws connected line segments. It has no position anchor: the points are on the label. Its type is "PolyLine".
type PolyLine struct {
	// Points is the flat list x0, y0, x1, y1, ... in mm, at least two points. Mandatory.
	Points []float64
	// LineWidth is the line width (default 1).
	LineWidth *float64
	// Color is the line colour (default black), dynamic text allowed.
	Color *string
	// Segments is a dash pattern dash, gap, ...; solid when nil.
	Segments []float64
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "PolyLine".
func (*PolyLine) Type() string { return TypePolyLine }

// MarshalJSON writes the object with its type and every property that is set.
func (o PolyLine) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypePolyLine, &o) }

func (*PolyLine) object() {}

func (o *PolyLine) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *PolyLine) literals() *map[string]lit { return &o.lits }

func (o *PolyLine) fields() []field {
	return append([]field(nil),
		field{name: "points", ptr: &o.Points},
		field{name: "lineWidth", ptr: &o.LineWidth},
		field{name: "color", ptr: &o.Color, dyn: true},
		field{name: "segments", ptr: &o.Segments},
	)
}

// Group groups objects (the maker's ObjectGroup). It has no position of its own. Its type is "ObjectGroup".
type Group struct {
	// Children are the grouped objects, drawn in order.
	Children []Object
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "ObjectGroup".
func (*Group) Type() string { return TypeGroup }

// MarshalJSON writes the object with its type and every property that is set.
func (o Group) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeGroup, &o) }

func (*Group) object() {}

func (o *Group) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *Group) literals() *map[string]lit { return &o.lits }

func (o *Group) fields() []field {
	return append([]field(nil),
		field{name: "children", ptr: &o.Children},
	)
}

// StaticBitmap draws a PNG image held in the label. Its type is "StaticBitmap".
type StaticBitmap struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Bitmap is the PNG image, base64-encoded. Mandatory.
	Bitmap *string
	// Width is the width in mm. Mandatory.
	Width *float64
	// Height is the height in mm. Mandatory.
	Height *float64
	// FgColor is the foreground colour.
	FgColor *string
	// BgColor is the background colour.
	BgColor *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "StaticBitmap".
func (*StaticBitmap) Type() string { return TypeStaticBitmap }

// MarshalJSON writes the object with its type and every property that is set.
func (o StaticBitmap) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeStaticBitmap, &o) }

func (*StaticBitmap) object() {}

func (o *StaticBitmap) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *StaticBitmap) literals() *map[string]lit { return &o.lits }

func (o *StaticBitmap) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "bitmap", ptr: &o.Bitmap},
		field{name: "width", ptr: &o.Width},
		field{name: "height", ptr: &o.Height},
		field{name: "fgColor", ptr: &o.FgColor, dyn: true},
		field{name: "bgColor", ptr: &o.BgColor, dyn: true},
	)
}

// Code128 draws a Code 128 barcode. Its type is "Code128".
type Code128 struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the data, dynamic text allowed. Mandatory.
	Text *string
	// BarHeight is the bar height in mm. Mandatory.
	BarHeight *float64
	// BarWidth is the narrowest bar in mm.
	BarWidth *float64
	// Encoding is AUTO (the default), A, B or C.
	Encoding *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "Code128".
func (*Code128) Type() string { return TypeCode128 }

// MarshalJSON writes the object with its type and every property that is set.
func (o Code128) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeCode128, &o) }

func (*Code128) object() {}

func (o *Code128) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *Code128) literals() *map[string]lit { return &o.lits }

func (o *Code128) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "barHeight", ptr: &o.BarHeight},
		field{name: "barWidth", ptr: &o.BarWidth},
		field{name: "encoding", ptr: &o.Encoding},
	)
}

// GS1128 draws a GS1-128 barcode from GS1 application identifiers. Its type is "GS1-128".
type GS1128 struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Apps are the element strings, in order. Mandatory.
	Apps []App
	// BarHeight is the bar height in mm. Mandatory.
	BarHeight *float64
	// BarWidth is the narrowest bar in mm.
	BarWidth *float64
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "GS1-128".
func (*GS1128) Type() string { return TypeGS1128 }

// MarshalJSON writes the object with its type and every property that is set.
func (o GS1128) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeGS1128, &o) }

func (*GS1128) object() {}

func (o *GS1128) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *GS1128) literals() *map[string]lit { return &o.lits }

func (o *GS1128) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "apps", ptr: &o.Apps},
		field{name: "barHeight", ptr: &o.BarHeight},
		field{name: "barWidth", ptr: &o.BarWidth},
	)
}

// Code39 draws a Code 39 barcode. Its type is "Code39".
type Code39 struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the data, dynamic text allowed. Mandatory.
	Text *string
	// BarHeight is the bar height in mm. Mandatory.
	BarHeight *float64
	// BarWidth is the narrowest bar in mm.
	BarWidth *float64
	// BarRatio is the wide-to-narrow ratio (default 2.5).
	BarRatio *float64
	// CheckDigit adds the mod 43 check digit (default false).
	CheckDigit *bool
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "Code39".
func (*Code39) Type() string { return TypeCode39 }

// MarshalJSON writes the object with its type and every property that is set.
func (o Code39) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeCode39, &o) }

func (*Code39) object() {}

func (o *Code39) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *Code39) literals() *map[string]lit { return &o.lits }

func (o *Code39) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "barHeight", ptr: &o.BarHeight},
		field{name: "barWidth", ptr: &o.BarWidth},
		field{name: "barRatio", ptr: &o.BarRatio},
		field{name: "checkDigit", ptr: &o.CheckDigit},
	)
}

// ITF draws an Interleaved 2 of 5 barcode. Its type is "ITF".
type ITF struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is an even number of digits, dynamic text allowed. Mandatory.
	Text *string
	// BarHeight is the bar height in mm. Mandatory.
	BarHeight *float64
	// BarWidth is the narrowest bar in mm.
	BarWidth *float64
	// BarRatio is the wide-to-narrow ratio (default 2.5).
	BarRatio *float64
	// HBearerBar is the horizontal bearer bar, in multiples of barWidth (0 = none).
	HBearerBar *float64
	// VBearerBar is the vertical bearer bar, in multiples of barWidth (0 = none).
	VBearerBar *float64
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "ITF".
func (*ITF) Type() string { return TypeITF }

// MarshalJSON writes the object with its type and every property that is set.
func (o ITF) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeITF, &o) }

func (*ITF) object() {}

func (o *ITF) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *ITF) literals() *map[string]lit { return &o.lits }

func (o *ITF) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "barHeight", ptr: &o.BarHeight},
		field{name: "barWidth", ptr: &o.BarWidth},
		field{name: "barRatio", ptr: &o.BarRatio},
		field{name: "hBearerBar", ptr: &o.HBearerBar},
		field{name: "vBearerBar", ptr: &o.VBearerBar},
	)
}

// EAN13 draws an EAN-13 barcode. Its type is "EAN-13".
type EAN13 struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is 12 digits (the check digit is computed) or 13, dynamic text allowed. Mandatory.
	Text *string
	// BarHeight is the bar height in mm. Mandatory.
	BarHeight *float64
	// BarWidth is the narrowest bar in mm.
	BarWidth *float64
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "EAN-13".
func (*EAN13) Type() string { return TypeEAN13 }

// MarshalJSON writes the object with its type and every property that is set.
func (o EAN13) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeEAN13, &o) }

func (*EAN13) object() {}

func (o *EAN13) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *EAN13) literals() *map[string]lit { return &o.lits }

func (o *EAN13) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "barHeight", ptr: &o.BarHeight},
		field{name: "barWidth", ptr: &o.BarWidth},
	)
}

// UPCA draws a UPC-A barcode. Its type is "UPC-A".
type UPCA struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is 11 digits (the check digit is computed) or 12, dynamic text allowed. Mandatory.
	Text *string
	// BarHeight is the bar height in mm. Mandatory.
	BarHeight *float64
	// BarWidth is the narrowest bar in mm.
	BarWidth *float64
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "UPC-A".
func (*UPCA) Type() string { return TypeUPCA }

// MarshalJSON writes the object with its type and every property that is set.
func (o UPCA) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeUPCA, &o) }

func (*UPCA) object() {}

func (o *UPCA) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *UPCA) literals() *map[string]lit { return &o.lits }

func (o *UPCA) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "barHeight", ptr: &o.BarHeight},
		field{name: "barWidth", ptr: &o.BarWidth},
	)
}

// PDF417 draws a PDF417 symbol. Its type is "PDF417".
type PDF417 struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the data, dynamic text allowed. Mandatory.
	Text *string
	// BarWidth is the module width in mm. Mandatory.
	BarWidth *float64
	// Aspect is the aspect ratio the printer aims for.
	Aspect *float64
	// RowHeight is the row height; it overrides Aspect.
	RowHeight *float64
	// Rows is the number of rows (3 to 90).
	Rows *int
	// Columns is the number of data columns (1 to 30).
	Columns *int
	// ErrorCorrection is the error-correction level 0 to 8 (automatic when nil).
	ErrorCorrection *int
	// ECI is the character set: 3 = ISO-8859-1, 26 = UTF-8.
	ECI *int
	// Compact draws compact PDF417 (default false).
	Compact *bool
	// QuietZone adds the quiet zone (default true).
	QuietZone *bool
	// ExtraQuietZone widens the quiet zone.
	ExtraQuietZone *float64
	// Debleed is the ink-spread compensation.
	Debleed *float64
	// BarColor is the bar colour (default black), dynamic text allowed.
	BarColor *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "PDF417".
func (*PDF417) Type() string { return TypePDF417 }

// MarshalJSON writes the object with its type and every property that is set.
func (o PDF417) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypePDF417, &o) }

func (*PDF417) object() {}

func (o *PDF417) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *PDF417) literals() *map[string]lit { return &o.lits }

func (o *PDF417) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "barWidth", ptr: &o.BarWidth},
		field{name: "aspect", ptr: &o.Aspect},
		field{name: "rowHeight", ptr: &o.RowHeight},
		field{name: "rows", ptr: &o.Rows},
		field{name: "columns", ptr: &o.Columns},
		field{name: "errorCorrection", ptr: &o.ErrorCorrection},
		field{name: "eci", ptr: &o.ECI},
		field{name: "compact", ptr: &o.Compact},
		field{name: "quietZone", ptr: &o.QuietZone},
		field{name: "extraQuietZone", ptr: &o.ExtraQuietZone},
		field{name: "debleed", ptr: &o.Debleed},
		field{name: "barColor", ptr: &o.BarColor, dyn: true},
	)
}

// DataMatrix draws a Data Matrix (ECC 200) symbol. Its type is "DataMatrix".
type DataMatrix struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the data, dynamic text allowed. Mandatory.
	Text *string
	// ModuleSize is the module size (default 5; see the package doc for its unit).
	ModuleSize *float64
	// Size is the symbol size in modules; the smallest that fits when nil.
	Size *Size
	// QuietZone adds the quiet zone (default true).
	QuietZone *bool
	// ExtraQuietZone widens the quiet zone.
	ExtraQuietZone *float64
	// Rectangular chooses a rectangular symbol (default false).
	Rectangular *bool
	// Color is the module colour (default black), dynamic text allowed.
	Color *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "DataMatrix".
func (*DataMatrix) Type() string { return TypeDataMatrix }

// MarshalJSON writes the object with its type and every property that is set.
func (o DataMatrix) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeDataMatrix, &o) }

func (*DataMatrix) object() {}

func (o *DataMatrix) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *DataMatrix) literals() *map[string]lit { return &o.lits }

func (o *DataMatrix) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "moduleSize", ptr: &o.ModuleSize},
		field{name: "size", ptr: &o.Size},
		field{name: "quietZone", ptr: &o.QuietZone},
		field{name: "extraQuietZone", ptr: &o.ExtraQuietZone},
		field{name: "rectangular", ptr: &o.Rectangular},
		field{name: "color", ptr: &o.Color, dyn: true},
	)
}

// GS1DataMatrix draws a GS1 Data Matrix from GS1 application identifiers. Its type is "GS1-DataMatrix".
type GS1DataMatrix struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Apps are the element strings, in order. Mandatory.
	Apps []App
	// ModuleSize is the module size (default 5; see the package doc for its unit).
	ModuleSize *float64
	// Size is the symbol size in modules; the smallest that fits when nil.
	Size *Size
	// QuietZone adds the quiet zone (default true).
	QuietZone *bool
	// ExtraQuietZone widens the quiet zone.
	ExtraQuietZone *float64
	// Rectangular chooses a rectangular symbol (default false).
	Rectangular *bool
	// Color is the module colour (default black), dynamic text allowed.
	Color *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "GS1-DataMatrix".
func (*GS1DataMatrix) Type() string { return TypeGS1DataMatrix }

// MarshalJSON writes the object with its type and every property that is set.
func (o GS1DataMatrix) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeGS1DataMatrix, &o) }

func (*GS1DataMatrix) object() {}

func (o *GS1DataMatrix) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *GS1DataMatrix) literals() *map[string]lit { return &o.lits }

func (o *GS1DataMatrix) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "apps", ptr: &o.Apps},
		field{name: "moduleSize", ptr: &o.ModuleSize},
		field{name: "size", ptr: &o.Size},
		field{name: "quietZone", ptr: &o.QuietZone},
		field{name: "extraQuietZone", ptr: &o.ExtraQuietZone},
		field{name: "rectangular", ptr: &o.Rectangular},
		field{name: "color", ptr: &o.Color, dyn: true},
	)
}

// GS1DataMatrixPlain draws a GS1 Data Matrix from a raw GS1 element string. Its type is "GS1-DataMatrix-Plain".
type GS1DataMatrixPlain struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the raw element string (a variable-length value ends at GS, 0x1D, or at the end), dynamic text allowed. Mandatory.
	Text *string
	// ModuleSize is the module size (default 5; see the package doc for its unit).
	ModuleSize *float64
	// Size is the symbol size in modules; the smallest that fits when nil.
	Size *Size
	// QuietZone adds the quiet zone (default true).
	QuietZone *bool
	// ExtraQuietZone widens the quiet zone.
	ExtraQuietZone *float64
	// Rectangular chooses a rectangular symbol (default false).
	Rectangular *bool
	// Color is the module colour (default black), dynamic text allowed.
	Color *string
	// Optimize lets the printer optimise the encoding (default false).
	Optimize *bool
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "GS1-DataMatrix-Plain".
func (*GS1DataMatrixPlain) Type() string { return TypeGS1DataMatrixPlain }

// MarshalJSON writes the object with its type and every property that is set.
func (o GS1DataMatrixPlain) MarshalJSON() ([]byte, error) {
	return encodeProps(nil, TypeGS1DataMatrixPlain, &o)
}

func (*GS1DataMatrixPlain) object() {}

func (o *GS1DataMatrixPlain) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *GS1DataMatrixPlain) literals() *map[string]lit { return &o.lits }

func (o *GS1DataMatrixPlain) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "moduleSize", ptr: &o.ModuleSize},
		field{name: "size", ptr: &o.Size},
		field{name: "quietZone", ptr: &o.QuietZone},
		field{name: "extraQuietZone", ptr: &o.ExtraQuietZone},
		field{name: "rectangular", ptr: &o.Rectangular},
		field{name: "color", ptr: &o.Color, dyn: true},
		field{name: "optimize", ptr: &o.Optimize},
	)
}

// GS1QRCode draws a GS1 QR Code from GS1 application identifiers. Its type is "GS1-QRCode".
type GS1QRCode struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Apps are the element strings, in order. Mandatory.
	Apps []App
	// ModuleSize is the module size (default 5; see the package doc for its unit).
	ModuleSize *float64
	// Size is the modules per side (21 to 177); the smallest that fits when nil.
	Size *int
	// QuietZone adds the quiet zone (default true).
	QuietZone *bool
	// ExtraQuietZone widens the quiet zone.
	ExtraQuietZone *float64
	// Color is the module colour (default black), dynamic text allowed.
	Color *string
	// ECCLevel is the error-correction level L (the default), M, Q or H.
	ECCLevel *string
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "GS1-QRCode".
func (*GS1QRCode) Type() string { return TypeGS1QRCode }

// MarshalJSON writes the object with its type and every property that is set.
func (o GS1QRCode) MarshalJSON() ([]byte, error) { return encodeProps(nil, TypeGS1QRCode, &o) }

func (*GS1QRCode) object() {}

func (o *GS1QRCode) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *GS1QRCode) literals() *map[string]lit { return &o.lits }

func (o *GS1QRCode) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "apps", ptr: &o.Apps},
		field{name: "moduleSize", ptr: &o.ModuleSize},
		field{name: "size", ptr: &o.Size},
		field{name: "quietZone", ptr: &o.QuietZone},
		field{name: "extraQuietZone", ptr: &o.ExtraQuietZone},
		field{name: "color", ptr: &o.Color, dyn: true},
		field{name: "eccLevel", ptr: &o.ECCLevel},
	)
}

// GS1QRCodePlain draws a GS1 QR Code from a raw GS1 element string. Its type is "GS1-QRCode-Plain".
type GS1QRCodePlain struct {
	// Anchor is the position: x, y, hAnchor, vAnchor.
	Anchor
	// Text is the raw element string (a variable-length value ends at GS, 0x1D, or at the end), dynamic text allowed. Mandatory.
	Text *string
	// ModuleSize is the module size (default 5; see the package doc for its unit).
	ModuleSize *float64
	// Size is the modules per side (21 to 177); the smallest that fits when nil.
	Size *int
	// QuietZone adds the quiet zone (default true).
	QuietZone *bool
	// ExtraQuietZone widens the quiet zone.
	ExtraQuietZone *float64
	// Color is the module colour (default black), dynamic text allowed.
	Color *string
	// ECCLevel is the error-correction level L (the default), M, Q or H.
	ECCLevel *string
	// Optimize lets the printer optimise the encoding (default false).
	Optimize *bool
	// Extra holds the properties this package does not model, and known ones of the wrong
	// shape, as written; they are written back unchanged.
	Extra map[string]json.RawMessage

	lits map[string]lit
}

// Type returns "GS1-QRCode-Plain".
func (*GS1QRCodePlain) Type() string { return TypeGS1QRCodePlain }

// MarshalJSON writes the object with its type and every property that is set.
func (o GS1QRCodePlain) MarshalJSON() ([]byte, error) {
	return encodeProps(nil, TypeGS1QRCodePlain, &o)
}

func (*GS1QRCodePlain) object() {}

func (o *GS1QRCodePlain) extra() *map[string]json.RawMessage { return &o.Extra }

func (o *GS1QRCodePlain) literals() *map[string]lit { return &o.lits }

func (o *GS1QRCodePlain) fields() []field {
	return append(o.Anchor.fields(),
		field{name: "text", ptr: &o.Text, dyn: true},
		field{name: "moduleSize", ptr: &o.ModuleSize},
		field{name: "size", ptr: &o.Size},
		field{name: "quietZone", ptr: &o.QuietZone},
		field{name: "extraQuietZone", ptr: &o.ExtraQuietZone},
		field{name: "color", ptr: &o.Color, dyn: true},
		field{name: "eccLevel", ptr: &o.ECCLevel},
		field{name: "optimize", ptr: &o.Optimize},
	)
}

// newObject returns an empty object of a known type, or nil.
func newObject(typ string) Object {
	switch typ {
	case TypeText:
		return &Text{}
	case TypeRect:
		return &Rect{}
	case TypePolyLine:
		return &PolyLine{}
	case TypeGroup:
		return &Group{}
	case TypeStaticBitmap:
		return &StaticBitmap{}
	case TypeCode128:
		return &Code128{}
	case TypeGS1128:
		return &GS1128{}
	case TypeCode39:
		return &Code39{}
	case TypeITF:
		return &ITF{}
	case TypeEAN13:
		return &EAN13{}
	case TypeUPCA:
		return &UPCA{}
	case TypePDF417:
		return &PDF417{}
	case TypeDataMatrix:
		return &DataMatrix{}
	case TypeGS1DataMatrix:
		return &GS1DataMatrix{}
	case TypeGS1DataMatrixPlain:
		return &GS1DataMatrixPlain{}
	case TypeGS1QRCode:
		return &GS1QRCode{}
	case TypeGS1QRCodePlain:
		return &GS1QRCodePlain{}
	}
	return nil
}
