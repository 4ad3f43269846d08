package preview_test

import (
	"encoding/json"
	"fmt"
	"strings"
)

// code39Chars are Code 39's characters by value, for its check character.
const code39Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%"

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ai is a GS1 element: its AI and value.
type ai struct{ id, value string }

// gs1Apps is elements as an object's apps, BWIPP's bracketed element string and the data a
// scanner reads (GS after a value of variable length that is not the last).
func gs1Apps(els []ai) (apps, bracketed, read string) {
	var a []string
	var b, r strings.Builder
	for i, e := range els {
		a = append(a, fmt.Sprintf(`{"id":%q,"value":%s}`, e.id, jsonString(e.value)))
		fmt.Fprintf(&b, "(%s)%s", e.id, e.value)
		r.WriteString(e.id + e.value)
		if i < len(els)-1 && !fixedLength(e.id) {
			r.WriteByte('\x1d')
		}
	}
	return "[" + strings.Join(a, ",") + "]", b.String(), r.String()
}

// fixedLength are the AIs of predefined length by their first two digits (GS1 General
// Specifications 7.8.5), the ones no separator follows.
func fixedLength(id string) bool {
	switch id[:2] {
	case "00", "01", "02", "03", "04", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "31", "32", "33", "34", "35", "36", "41":
		return true
	}
	return false
}

// gs1Ref is the request for elements: BWIPP's GS1 encoder (bcid) with the bracketed element
// string, or, when a value holds a bracket (which BWIPP would read as the next AI), its plain
// encoder with FNC1 as parsefnc writes it.
func gs1Ref(els []ai, bcid, plain string, opts map[string]any) (string, string, map[string]any) {
	_, br, read := gs1Apps(els)
	o := map[string]any{}
	for k, v := range opts {
		o[k] = v
	}
	for _, e := range els {
		if strings.ContainsAny(e.value, "()") {
			o["parsefnc"] = true
			return plain, plainFNC1(read), o
		}
	}
	o["dontlint"] = true
	return bcid, br, o
}

// plainFNC1 is a -Plain string (GS between elements) as BWIPP's parsefnc takes it: FNC1
// first and for each GS.
func plainFNC1(s string) string {
	return "^FNC1" + strings.ReplaceAll(s, "\x1d", "^FNC1")
}

// Why the standard lets the preview's encoders write some data otherwise than BWIPP does.
const (
	c128Shift = "Code 128 lets an encoder shift (one character of the other code set) or latch: " +
		"gozxing latches to code set A and back where BWIPP shifts, a symbol one character longer"
	pdfCompaction = "PDF417's compaction modes and text sub-modes are the encoder's choice (ISO/IEC 15438 5.4): " +
		"the preview's encoder changes them otherwise than BWIPP"
	dmEncodation = "Data Matrix's encodations and when to change between them are the encoder's choice " +
		"(ISO/IEC 16022 5.2, Annex P): gozxing's look-ahead changes them otherwise than BWIPP's"
	gs1DMASCII = "the preview writes GS1 data in ASCII encodation with FNC1 (valid at every size it chooses); " +
		"BWIPP changes to C40, Text or EDIFACT where they are shorter"
	gs1DMLarger = "in ASCII encodation a lower-case letter or a punctuation mark takes a codeword, " +
		"where BWIPP's Text and C40 take two thirds of one: a size larger"
	qrModes = "QR Code lets an encoder change modes within the data (ISO/IEC 18004 7.4); the preview writes one " +
		"mode for all of it, BWIPP changes between numeric, alphanumeric and byte where shorter"
)

// refCases are the symbols compared with BWIPP: every type the preview draws, GS1 and not,
// with data of each character class of each symbology, mode changes and lengths at size
// boundaries.
func refCases() []refCase {
	var cs []refCase
	linear := func(typ, props string) string {
		return fmt.Sprintf(`{"type":%q,%s,"barHeight":10,"barWidth":0.3}`, typ, props)
	}
	// Code 128.
	for _, c := range []struct{ name, text, alt string }{
		{"digits even", "0123456789", ""},
		{"digits odd", "123456789", ""},
		{"capitals", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""},
		{"lower case", "abcdefghijklmnopqrstuvwxyz", ""},
		{"punctuation", " !\"#$%&'()*+,-./:;<=>?@[\\]^_`|~", ""}, // { and } are dynamic text's
		{"mixed", "Hello-128 x", ""},
		{"letters then digits", "AB1234cd", ""},
		{"digits then letters", "1234AB", ""},
		{"letters, digits, letters", "A12345B", ""},
		{"two digits between letters", "ab12cd", ""},
		{"digit runs of 4 and 5", "x1234y12345z", ""},
		{"controls", "\x01\x09\x1f", ""},
		{"controls and lower case", "a\x01b\x02c", c128Shift},
		{"DEL", "ab\x7f", ""},
		{"80 digits", strings.Repeat("0123456789", 8), ""},
		{"80 letters", strings.Repeat("Label", 16), ""},
	} {
		cs = append(cs, refCase{name: "Code128 " + c.name, obj: linear("Code128", `"text":`+jsonString(c.text)),
			bcid: "code128", text: c.text, want: c.text, alt: c.alt})
	}
	for _, c := range []struct{ name, text, set, alt string }{
		{"code set A", "ABC\x01", "A", ""},
		{"code set A where BWIPP starts in B", "ABC", "A", "the code set is the label's choice (encoding), not the one BWIPP chooses"},
		{"code set B", "1234abc", "B", "the code set is the label's choice (encoding), not the shortest BWIPP chooses"},
		{"code set C", "123456", "C", ""},
	} {
		cs = append(cs, refCase{name: "Code128 " + c.name, obj: linear("Code128", `"text":`+jsonString(c.text)+`,"encoding":"`+c.set+`"`),
			bcid: "code128", text: c.text, want: c.text, alt: c.alt})
	}
	// GS1-128.
	for _, c := range []struct {
		name string
		els  []ai
		alt  string
	}{
		{"GTIN", []ai{{"01", "09501101530003"}}, ""},
		{"GTIN, date, lot", []ai{{"01", "09501101530003"}, {"17", "270101"}, {"10", "LOT42"}}, ""},
		{"lot first", []ai{{"10", "ABC123"}, {"01", "09501101530003"}}, ""},
		{"odd digits in a lot", []ai{{"10", "12345"}, {"21", "678"}}, ""},
		{"lower case", []ai{{"10", "abc-def"}, {"21", "x/y"}}, ""},
		{"percent and punctuation", []ai{{"4300", "A%B&C'D"}, {"10", "!\"%&'()*+,-./:;<=>?_"}}, ""},
		{"SSCC", []ai{{"00", "095011010000000018"}}, ""},
		{"weight", []ai{{"01", "09501101530003"}, {"3103", "001250"}, {"15", "270228"}}, ""},
	} {
		apps, _, read := gs1Apps(c.els)
		bcid, text, opts := gs1Ref(c.els, "gs1-128", "code128", nil)
		cs = append(cs, refCase{name: "GS1-128 " + c.name, obj: linear("GS1-128", `"apps":`+apps),
			bcid: bcid, text: text, opts: opts, want: read, alt: c.alt})
	}
	// Code 39.
	for _, c := range []struct {
		name, text string
		check      bool
	}{
		{"digits", "0123456789", false},
		{"capitals", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", false},
		{"symbols", "-. $/+%", false},
		{"with check character", "CODE-39 TEST", true},
		{"one character with check", "A", true},
	} {
		opts := map[string]any{}
		props := `"text":` + jsonString(c.text)
		zbarWant := ""
		if c.check {
			opts["includecheck"] = true
			props += `,"checkDigit":true`
			sum := 0
			for _, r := range c.text {
				sum += strings.IndexRune(code39Chars, r)
			}
			zbarWant = c.text + string(code39Chars[sum%43]) // zbarimg gives the check character
		}
		cs = append(cs, refCase{name: "Code39 " + c.name, obj: linear("Code39", props), bcid: "code39", text: c.text, opts: opts,
			want: c.text, zbarWant: zbarWant})
	}
	// ITF.
	for _, text := range []string{"12", "1234567890", "00012345678905", "98765432109876543210"} {
		cs = append(cs, refCase{name: fmt.Sprintf("ITF %d digits", len(text)), obj: linear("ITF", `"text":"`+text+`"`),
			bcid: "interleaved2of5", text: text, want: text})
	}
	// EAN-13 and UPC-A: every digit in each place and parity pattern.
	for _, text := range []string{"9501101530003", "4006381333931", "5901234123457", "7612345678900", "3123456789019", "8801234567893"} {
		cs = append(cs, refCase{name: "EAN-13 " + text, obj: linear("EAN-13", `"text":"`+text+`"`), bcid: "ean13", text: text, want: text})
	}
	for _, text := range []string{"036000291452", "012345678905", "987654321098"} {
		cs = append(cs, refCase{name: "UPC-A " + text, obj: linear("UPC-A", `"text":"`+text+`"`), bcid: "upca", text: text, want: text})
	}
	// PDF417: text, numeric and byte compaction and the changes between them, each error
	// correction level.
	long := strings.Repeat("PDF417 preview, every row read back 0123456789. ", 8)
	for _, c := range []struct {
		name, text string
		level      int
		alt        string
	}{
		{"capitals", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 2, ""},
		{"lower case", "abcdefghijklmnopqrstuvwxyz", 2, ""},
		{"mixed case", "MiXeD CaSe TeXt", 2, ""},
		{"punctuation", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`|~", 2, pdfCompaction},
		{"digits", "00123456789012345678901234567890", 2, ""},
		{"44 digits", strings.Repeat("1234", 11), 2, ""},
		{"text then digits", "Lot 42, 2027-01-01 0123456789012345", 3, pdfCompaction},
		{"bytes", "caf\u00e9 \u20ac5", 2, ""},
		{"controls", "A\x01B\x02C\tD\r\n", 2, pdfCompaction},
		{"level 0", "A1", 0, pdfCompaction},
		{"level 5", "A1", 5, pdfCompaction},
		{"level 8", "Level 8", 8, pdfCompaction},
		{"long", long, 5, pdfCompaction},
	} {
		cs = append(cs, refCase{name: "PDF417 " + c.name,
			obj:  fmt.Sprintf(`{"type":"PDF417","text":%s,"barWidth":0.3,"errorCorrection":%d}`, jsonString(c.text), c.level),
			bcid: "pdf417", text: c.text, opts: map[string]any{"eclevel": c.level}, want: c.text, alt: c.alt})
	}
	// Data Matrix: each encodation (144 x 144 is TestDataMatrix144's: its blocks are
	// interleaved as ISO/IEC 16022 says, BWIPP interleaves them as in the other sizes, and
	// libdmtx, the reader of both, takes minutes) (ASCII, C40, Text, X12, EDIFACT, Base 256) and the
	// changes between them, sizes at their capacity's edge, rectangles.
	dm := func(text, props string) string {
		return fmt.Sprintf(`{"type":"DataMatrix","text":%s,"moduleSize":0.3%s}`, jsonString(text), props)
	}
	for _, c := range []struct {
		name, text, props, alt string
	}{
		{"one capital", "A", "", ""},
		{"6 digits, the 10 x 10's capacity", "123456", "", ""},
		{"7 digits", "1234567", "", ""},
		{"odd digits", "12345", "", ""},
		{"capitals (C40)", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "", ""},
		{"lower case (Text)", "abcdefghijklmnopqrstuvwxyz", "", ""},
		{"X12", "ABC>DEF*GHI\rJKL 123", "", ""},
		{"EDIFACT", "@ABC^_DEF?GHI=JKL;", "", dmEncodation},
		{"bytes (Base 256)", "\u00e9\u00e8\u00e0\u00fc\u00f6\u00e4\u00df", "", ""},
		{"controls", "\x01\x02\x03\x04", "", ""},
		{"mixed", "Hello DataMatrix 12345", "", dmEncodation},
		{"digits then capitals", "0123456789ABCDEFGHIJ", "", ""},
		{"capitals then digits", "ABCDEFGHIJ0123456789", "", ""},
		{"lower case then digits", "lot0042 serial9999", "", dmEncodation},
		{"sized 24 x 24", "ABC", `,"size":{"width":24,"height":24}`, ""},
		{"rectangular", "1234567890", `,"rectangular":true`, ""},
		{"18 x 8", "R144", `,"size":{"width":18,"height":8}`, ""},
		{"48 x 16", "R768", `,"size":{"width":48,"height":16}`, ""},
		{"52 x 52 (two blocks)", strings.Repeat("0123456789", 20), "", ""},
		{"large text", strings.Repeat("Every codeword of the largest Data Matrix. ", 30), "", dmEncodation},
	} {
		// The preview writes characters up to U+00FF as one byte each (ISO/IEC 8859-1, Data
		// Matrix's default), as BWIPP does with binarytext; bwip-js writes UTF-8 otherwise.
		cs = append(cs, refCase{name: "DataMatrix " + c.name, obj: dm(c.text, c.props), bcid: "datamatrix", text: c.text,
			opts: map[string]any{"binarytext": true}, want: c.text, alt: c.alt})
	}
	// Every size but 144 x 144, square and rectangular, filled to its capacity with digits
	// (two a codeword): the size, the data regions and the interleaved blocks of each.
	for _, z := range []struct{ w, h, capacity int }{
		{10, 10, 3}, {12, 12, 5}, {14, 14, 8}, {16, 16, 12}, {18, 18, 18}, {20, 20, 22}, {22, 22, 30},
		{24, 24, 36}, {26, 26, 44}, {32, 32, 62}, {36, 36, 86}, {40, 40, 114}, {44, 44, 144}, {48, 48, 174},
		{52, 52, 204}, {64, 64, 280}, {72, 72, 368}, {80, 80, 456}, {88, 88, 576}, {96, 96, 696},
		{104, 104, 816}, {120, 120, 1050}, {132, 132, 1304},
		{18, 8, 5}, {32, 8, 10}, {26, 12, 16}, {36, 12, 22}, {36, 16, 32}, {48, 16, 49},
	} {
		text := strings.Repeat("9876543210", z.capacity/5+1)[:2*z.capacity]
		props := ""
		if z.w != z.h {
			props = `,"rectangular":true`
		}
		cs = append(cs, refCase{name: fmt.Sprintf("DataMatrix %d x %d full", z.w, z.h), obj: dm(text, props), bcid: "datamatrix",
			text: text, opts: map[string]any{"binarytext": true}, want: text})
	}
	// GS1 Data Matrix, from apps and -Plain.
	for _, c := range []struct {
		name string
		els  []ai
		alt  string
	}{
		{"GTIN", []ai{{"01", "09501101530003"}}, ""},
		{"GTIN, date, lot", []ai{{"01", "09501101530003"}, {"17", "270101"}, {"10", "ABC-123"}}, ""},
		{"odd digits in a lot", []ai{{"10", "12345"}, {"21", "678"}}, ""},
		{"capitals", []ai{{"10", "ABCDEFGHIJKLMNOP"}, {"21", "QRSTUVWXYZ"}}, gs1DMASCII},
		{"lower case", []ai{{"10", "abcdefghijklmnop"}, {"21", "xyz"}}, gs1DMASCII},
		{"percent and punctuation", []ai{{"4300", "A%B&C'D"}, {"10", "!\"%&'()*+,-./:;<=>?_"}}, gs1DMASCII},
		{"long", []ai{{"01", "09501101530003"}, {"91", strings.Repeat("A1B2C3D4E5", 7)}, {"10", "LOT42"}}, gs1DMASCII},
	} {
		apps, _, read := gs1Apps(c.els)
		bcid, text, opts := gs1Ref(c.els, "gs1datamatrix", "datamatrix", nil)
		cs = append(cs, refCase{name: "GS1-DataMatrix " + c.name, obj: `{"type":"GS1-DataMatrix","apps":` + apps + `,"moduleSize":0.3}`,
			bcid: bcid, text: text, opts: opts, want: read, alt: c.alt})
		cs = append(cs, refCase{name: "GS1-DataMatrix-Plain " + c.name, obj: `{"type":"GS1-DataMatrix-Plain","text":` + jsonString(read) + `,"moduleSize":0.3}`,
			bcid: "datamatrix", text: plainFNC1(read), opts: map[string]any{"parsefnc": true}, want: read, alt: c.alt})
	}
	// GS1 QR Code, from apps and -Plain: numeric, alphanumeric (with "%", and GS written
	// "%") and byte mode, each error correction level, versions at their capacity's edge.
	for _, c := range []struct {
		name  string
		els   []ai
		level string
		alt   string
	}{
		{"digits", []ai{{"01", "09501101530003"}, {"17", "270101"}}, "L", ""},
		{"digits and a separator", []ai{{"10", "12345"}, {"21", "678"}}, "M", qrModes},
		{"capitals", []ai{{"01", "09501101530003"}, {"10", "ABC-123"}}, "Q", qrModes},
		{"percent", []ai{{"01", "09501101530003"}, {"10", "AB%12"}}, "L", qrModes},
		{"percent and separators", []ai{{"10", "%A%"}, {"21", "%%"}, {"4300", "X%"}}, "L", ""},
		{"lower case", []ai{{"10", "abc"}, {"21", "x/y"}}, "H", ""},
		{"punctuation", []ai{{"4300", "A&C'D"}, {"10", "!\"%&'()*+,-./:;<=>?_"}}, "L", qrModes},
		{"SSCC", []ai{{"00", "095011010000000018"}}, "M", ""},
		{"41 digits, version 1's numeric capacity, which FNC1 takes past", []ai{{"01", "09501101530003"}, {"17", "270101"}, {"3103", "001250"}, {"10", "12345"}}, "L", ""},
		{"long", []ai{{"01", "09501101530003"}, {"91", strings.Repeat("A1B2C3D4E5", 7)}, {"10", "LOT42"}}, "L", qrModes},
	} {
		apps, _, read := gs1Apps(c.els)
		bcid, text, opts := gs1Ref(c.els, "gs1qrcode", "qrcode", map[string]any{"eclevel": c.level})
		cs = append(cs, refCase{name: "GS1-QRCode " + c.name, obj: `{"type":"GS1-QRCode","apps":` + apps + `,"moduleSize":0.3,"eccLevel":"` + c.level + `"}`,
			bcid: bcid, text: text, opts: opts, want: read, alt: c.alt})
		cs = append(cs, refCase{name: "GS1-QRCode-Plain " + c.name, obj: `{"type":"GS1-QRCode-Plain","text":` + jsonString(read) + `,"moduleSize":0.3,"eccLevel":"` + c.level + `"}`,
			bcid: "qrcode", text: plainFNC1(read), opts: map[string]any{"parsefnc": true, "eclevel": c.level}, want: read, alt: c.alt})
	}
	// QR Code versions from 1 to 40 (version information from 7 on, more alignment patterns
	// and blocks as they grow), at each error correction level, in numeric mode. The digits
	// stand for the data's shape: the -Plain text is not read as GS1 by the encoder.
	for _, v := range []struct {
		digits int
		level  string
	}{{17, "H"}, {60, "L"}, {150, "M"}, {250, "Q"}, {400, "L"}, {800, "H"}, {1500, "M"}, {3000, "Q"}, {7000, "L"}} {
		text := strings.Repeat("0123456789", v.digits/10+1)[:v.digits]
		cs = append(cs, refCase{name: fmt.Sprintf("GS1-QRCode-Plain %d digits at %s", v.digits, v.level),
			obj:  `{"type":"GS1-QRCode-Plain","text":"` + text + `","moduleSize":0.3,"eccLevel":"` + v.level + `"}`,
			bcid: "qrcode", text: "^FNC1" + text, opts: map[string]any{"parsefnc": true, "eclevel": v.level}, want: text})
	}
	// The alt cases whose symbol is larger than the smallest BWIPP encodes the data in.
	larger := map[string]string{
		"Code128 controls and lower case": "gozxing latches to code set A and back for each control character, " +
			"two characters more than BWIPP's shifts",
		"Code128 code set B":        "the label asks for code set B, where C would write the digits in pairs",
		"GS1-DataMatrix lower case": gs1DMLarger, "GS1-DataMatrix-Plain lower case": gs1DMLarger,
		"GS1-DataMatrix percent and punctuation": gs1DMLarger, "GS1-DataMatrix-Plain percent and punctuation": gs1DMLarger,
	}
	for i := range cs {
		if r, ok := larger[cs[i].name]; ok {
			cs[i].larger = r
			delete(larger, cs[i].name)
		}
	}
	if len(larger) != 0 {
		panic(fmt.Sprintf("larger names no case: %v", larger))
	}
	return cs
}
