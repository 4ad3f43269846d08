package label

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labelprinter/go-labelprinter/label/gs1"
	"github.com/labelprinter/go-labelprinter/label/internal/dmcap"
	"github.com/labelprinter/go-labelprinter/label/internal/pdf417"
	"github.com/makiuchi-d/gozxing"
	dmencoder "github.com/makiuchi-d/gozxing/datamatrix/encoder"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode/decoder"
)

// This file holds each symbology's character set and capacity, checked before anything
// prints: what a symbol cannot encode is a problem of the label, not a surprise at the
// printer or a marked box in the preview. The limits are the encoders' own: Code 128's are
// its writer's (gozxing, which the preview draws with), PDF417's its encoder's (package
// pdf417, the preview's, at the level the preview draws), QR Code's and Data Matrix's come from
// the symbol tables of ISO/IEC 18004 and 16022 as gozxing holds them, and Code 39's set is
// Code39Chars, which the preview's Code 39 draws from.

// Code39Chars are the 43 characters of Code 39, in the order of their values for the mod 43
// check character.
const Code39Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%"

// symbolData checks the data of a barcode object against its symbology. Data holding dynamic
// text is checked once filled; absent or empty data is reported by the other checks.
func (v *validator) symbolData(at string, o Object) {
	switch o := o.(type) {
	case *Code39:
		if s, ok := staticText(o.Text); ok {
			for i, c := range s {
				if !strings.ContainsRune(Code39Chars, c) {
					v.add(at+".text", "character "+strconv.QuoteRune(c)+" at byte "+strconv.Itoa(i)+" is not in Code 39 (0-9, A-Z, space and - . $ / + %)")
					break
				}
			}
		}
	case *Code128:
		if s, ok := staticText(o.Text); ok {
			if i := strings.IndexFunc(s, func(c rune) bool { return c >= '\u00f1' && c <= '\u00f4' }); i >= 0 {
				// The writer reads these as FNC1 to FNC4, not as the characters written.
				c, _ := utf8.DecodeRuneInString(s[i:])
				v.add(at+".text", "character "+strconv.QuoteRune(c)+" at byte "+strconv.Itoa(i)+" is not ASCII, which Code 128 holds")
			} else if msg := code128Fits(s); msg != "" {
				v.add(at+".text", msg)
			}
		}
	case *GS1128:
		if raw, ok := gs1Data(o.Apps); ok {
			// FNC1 first and in place of each GS: one character of the writer's each.
			if msg := code128Fits("\u00f1" + strings.ReplaceAll(raw, "\x1d", "\u00f1")); msg != "" {
				v.add(at+".apps", "the element string "+msg)
			}
		}
	case *DataMatrix:
		if s, ok := staticText(o.Text); ok {
			v.dataMatrixFits(at, s, false, o.Size, Or(o.Rectangular, false))
		}
	case *GS1DataMatrix:
		if raw, ok := gs1Data(o.Apps); ok {
			v.dataMatrixFits(at, raw, true, o.Size, Or(o.Rectangular, false))
		}
	case *GS1DataMatrixPlain:
		if s, ok := staticText(o.Text); ok {
			v.dataMatrixFits(at, s, true, o.Size, Or(o.Rectangular, false))
		}
	case *PDF417:
		if s, ok := staticText(o.Text); ok {
			level := pdf417.Level(len(s))
			if e := o.ErrorCorrection; e != nil && *e >= 0 && *e <= 8 {
				level = byte(*e)
			}
			if err := pdf417.Fits(s, level); err != nil {
				v.add(at+".text", err.Error())
			}
		}
	case *GS1QRCode:
		if raw, ok := gs1Data(o.Apps); ok {
			v.qrFits(at, raw, o.Size, Or(o.ECCLevel, DefaultECCLevel))
		}
	case *GS1QRCodePlain:
		if s, ok := staticText(o.Text); ok {
			v.qrFits(at, s, o.Size, Or(o.ECCLevel, DefaultECCLevel))
		}
	}
}

// staticText returns a barcode's data when it is set, not empty and holds no dynamic text.
func staticText(p *string) (string, bool) {
	if p == nil || *p == "" || isDynamic(*p) {
		return "", false
	}
	return *p, true
}

// gs1Data returns the element string of apps as a symbol carries it (gs1.Raw: GS after a
// variable-length value), when every entry is set and none holds dynamic text.
func gs1Data(apps []App) (string, bool) {
	if len(apps) == 0 {
		return "", false
	}
	els := make([]gs1.Element, len(apps))
	for i, a := range apps {
		if a.ID == "" || a.Value == "" || isDynamic(a.ID) || isDynamic(a.Value) {
			return "", false
		}
		els[i] = gs1.Element{AI: a.ID, Value: a.Value}
	}
	return gs1.Raw(els), true
}

// code128Fits returns why Code 128's writer cannot write s (ASCII only, at most 80
// characters), or "".
func code128Fits(s string) string {
	_, err := oned.NewCode128Writer().Encode(s, gozxing.BarcodeFormat_CODE_128, 0, 1, nil)
	if err == nil {
		return ""
	}
	n := utf8.RuneCountInString(s)
	if n > 80 {
		return "is " + strconv.Itoa(n) + " characters long; Code 128 holds at most 80"
	}
	for i, c := range s {
		if c > 127 && (c < '\u00f1' || c > '\u00f4') {
			return "character " + strconv.QuoteRune(c) + " at byte " + strconv.Itoa(i) + " is not ASCII, which Code 128 holds"
		}
	}
	return "cannot be written in Code 128"
}

// dataMatrixFits checks that the data fits a Data Matrix (ECC 200) of the label's size, or of
// any size when it sets none: GS1 data encoded in ASCII mode (FNC1 first and for each GS,
// two digits a codeword), other data as the high-level encoder encodes it.
func (v *validator) dataMatrixFits(at, s string, isGS1 bool, size *Size, rect bool) {
	shape := dmencoder.SymbolShapeHint_FORCE_SQUARE
	if rect {
		shape = dmencoder.SymbolShapeHint_FORCE_RECTANGLE
	}
	var dim *gozxing.Dimension
	sized := ""
	if size != nil && size.Width != nil && size.Height != nil {
		d, err := gozxing.NewDimension(*size.Width, *size.Height)
		if err != nil {
			return
		}
		if info, _ := dmencoder.SymbolInfo_Lookup(1, dmencoder.SymbolShapeHint_FORCE_NONE, d, d, false); info == nil {
			return // not a Data Matrix size: reported as that
		}
		dim, shape = d, dmencoder.SymbolShapeHint_FORCE_NONE
		sized = " of size " + strconv.Itoa(*size.Width) + "x" + strconv.Itoa(*size.Height)
	}
	n := 0
	if isGS1 {
		n = 1 // FNC1 in first position
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				v.add(at, "byte "+strconv.Itoa(i)+" of the GS1 data is not ASCII, which a GS1 Data Matrix holds")
				return
			}
			if s[i] >= '0' && s[i] <= '9' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				i++
			}
			n++
		}
	} else {
		// Data that cannot fit on its count alone is not given to the encoder (dmcap).
		if n = dmcap.MinCodewords(s); n <= dmcap.MaxCodewords {
			cw, err := dmencoder.EncodeHighLevel(s, shape, nil, nil)
			if err != nil {
				v.add(at+".text", "cannot be encoded in a Data Matrix: "+err.Error())
				return
			}
			n = max(len(cw), n)
		}
	}
	if info, _ := dmencoder.SymbolInfo_Lookup(n, shape, dim, dim, false); info == nil {
		v.add(at, "the data takes "+strconv.Itoa(n)+" codewords, more than a Data Matrix"+sized+" holds")
	}
}

// qrFits checks that GS1 data fits a QR Code of the label's size and error-correction level,
// or of any size when it sets none: in the one mode the encoder writes the whole data in
// (numeric for digits; alphanumeric when every character is one of that mode's or GS, which
// is written "%", a "%" then taking two; byte otherwise, UTF-8 behind an ECI beyond
// ISO-8859-1), after the mode and FNC1 headers and the character count.
func (v *validator) qrFits(at, s string, size *int, ecc string) {
	level := map[string]decoder.ErrorCorrectionLevel{"L": decoder.ErrorCorrectionLevel_L, "M": decoder.ErrorCorrectionLevel_M,
		"Q": decoder.ErrorCorrectionLevel_Q, "H": decoder.ErrorCorrectionLevel_H}
	lv, ok := level[ecc]
	if !ok {
		return // eccLevel is reported as such
	}
	mode, n, header := decoder.Mode_NUMERIC, len(s), 8 // mode and FNC1 in first position
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			mode = decoder.Mode_ALPHANUMERIC
		}
	}
	if mode == decoder.Mode_NUMERIC && strings.IndexByte(s, '\x1d') >= 0 {
		mode = decoder.Mode_ALPHANUMERIC
	}
	if mode == decoder.Mode_ALPHANUMERIC {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c != '\x1d' && strings.IndexByte("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:", c) < 0 {
				mode = decoder.Mode_BYTE
				break
			}
		}
	}
	var bits int
	switch mode {
	case decoder.Mode_NUMERIC:
		bits = 10*(n/3) + []int{0, 4, 7}[n%3]
	case decoder.Mode_ALPHANUMERIC:
		n += strings.Count(s, "%")
		bits = 11*(n/2) + 6*(n%2)
	default:
		n = utf8.RuneCountInString(s)
		for _, c := range s {
			if c > 0xff {
				n, header = len(s), header+12 // UTF-8, announced by an ECI
				break
			}
		}
		bits = 8 * n
	}
	fits := func(version int) bool {
		ver, err := decoder.Version_GetVersionForNumber(version)
		if err != nil {
			return false
		}
		count := mode.GetCharacterCountBits(ver)
		capacity := 8 * (ver.GetTotalCodewords() - ver.GetECBlocksForLevel(lv).GetTotalECCodewords())
		return n < 1<<count && header+count+bits <= capacity
	}
	if size != nil {
		if s := *size; s >= 21 && s <= 177 && (s-17)%4 == 0 {
			if !fits((s - 17) / 4) {
				v.add(at, "the data does not fit a QR Code of size "+strconv.Itoa(s)+" at eccLevel "+ecc)
			}
			return
		}
	}
	if !fits(40) {
		v.add(at, "the data does not fit a QR Code of any size at eccLevel "+ecc)
	}
}
