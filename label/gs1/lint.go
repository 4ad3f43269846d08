package gs1

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// lintErr is what a linter found wrong in a component: at byte pos of it, n bytes long.
type lintErr struct {
	pos, n int
	msg    string
}

// linter checks one component of a value; nil when it is right.
type linter func(v string) *lintErr

// linters are the dictionary's linters this package implements, by the dictionary's names.
// A component's linter missing here (couponcode, couponposoffer) is skipped: the component is
// still checked for length and character set.
var linters = map[string]linter{
	"csum":          lintCsum,
	"csumalpha":     lintCsumAlpha,
	"gcppos1":       lintGCPPos1,
	"gcppos2":       lintGCPPos2,
	"key":           lintGCPPos1, // the name of gcppos1 before the 2026-01-27 release
	"keyoff1":       lintGCPPos2, // the name of gcppos2 before the 2026-01-27 release
	"yymmd0":        lintYYMMD0,
	"yymmdd":        lintYYMMDD,
	"yyyymmd0":      lintYYYYMMD0,
	"yyyymmdd":      lintYYYYMMDD,
	"hh":            lintHH,
	"mi":            lintMI,
	"ss":            lintSS,
	"hhmi":          lintHHMI,
	"iso3166":       lintISO3166,
	"iso3166999":    lintISO3166999,
	"iso3166alpha2": lintISO3166Alpha2,
	"iso4217":       lintISO4217,
	"iso5218":       lintISO5218,
	"iban":          lintIBAN,
	"importeridx":   lintImporterIdx,
	"pcenc":         lintPcenc,
	"nonzero":       lintNonZero,
	"zero":          lintZero,
	"nozeroprefix":  lintNoZeroPrefix,
	"hasnondigit":   lintHasNonDigit,
	"hyphen":        lintHyphen,
	"yesno":         lintYesNo,
	"winding":       lintWinding,
	"latitude":      lintLatitude,
	"longitude":     lintLongitude,
	"pieceoftotal":  lintPieceOfTotal,
	"posinseqslash": lintPosInSeqSlash,
	"mediatype":     lintMediaType,
	"packagetype":   lintPackageType,
}

// csets are the linters of the character sets a component is written in.
var csets = map[byte]linter{'N': lintCsetNumeric, 'X': lintCset82, 'Y': lintCset39, 'Z': lintCset64}

func fail(pos, n int, msg string) *lintErr { return &lintErr{pos: pos, n: n, msg: msg} }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// nonDigit returns the error for the first byte of v that is not a digit, or nil.
func nonDigit(v string) *lintErr {
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) {
			return fail(i, 1, "character "+charAt(v, i)+" is not a digit")
		}
	}
	return nil
}

func lintCsetNumeric(v string) *lintErr { return nonDigit(v) }

// cset82 is GS1 AI encodable character set 82: the invariant characters of ISO/IEC 646.
func inCset82(c byte) bool {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '"', '%', '&', '\'', '(', ')', '*', '+', ',', '-', '.', '/', ':', ';', '<', '=', '>', '?', '_':
		return true
	}
	return false
}

func inCset39(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '#' || c == '-' || c == '/'
}

func inCset64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// charAt names the character at byte i of v: a byte of a UTF-8 sequence is named as the
// whole character.
func charAt(v string, i int) string {
	c := v[i]
	if c < 0x80 {
		return strconv.QuoteRune(rune(c))
	}
	for j := i; j > 0 && j > i-3 && v[j]&0xC0 == 0x80; j-- {
		i = j - 1
	}
	if r, _ := utf8.DecodeRuneInString(v[i:]); r != utf8.RuneError {
		return strconv.QuoteRune(r)
	}
	return strconv.Quote(v[i : i+1])
}

func cset(v string, in func(byte) bool, name string) *lintErr {
	for i := 0; i < len(v); i++ {
		if !in(v[i]) {
			return fail(i, 1, "character "+charAt(v, i)+" is not in "+name)
		}
	}
	return nil
}

func lintCset82(v string) *lintErr { return cset(v, inCset82, "GS1 character set 82") }
func lintCset39(v string) *lintErr { return cset(v, inCset39, "GS1 character set 39 (A-Z 0-9 # - /)") }

// lintCset64: base64url, with at most two "=" of padding and then only on a length that is
// a multiple of 3.
func lintCset64(v string) *lintErr {
	pads := 0
	for pads < len(v) && v[len(v)-1-pads] == '=' {
		pads++
	}
	if pads > 2 || pads > 0 && len(v)%3 != 0 {
		return fail(len(v)-pads, pads, "has wrong \"=\" padding")
	}
	return cset(v[:len(v)-pads], inCset64, "GS1 character set 64 (base64url)")
}

// mod10 is the GS1 check digit of digits: weights 3 and 1 from the right.
func mod10(digits string) byte {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 {
			d *= 3
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

func lintCsum(v string) *lintErr {
	if v == "" {
		return fail(0, 0, "is too short for a check digit")
	}
	if err := nonDigit(v); err != nil {
		return err
	}
	if want := mod10(v[:len(v)-1]); v[len(v)-1] != want {
		return fail(len(v)-1, 1, "check digit is "+v[len(v)-1:]+", must be "+string(want))
	}
	return nil
}

// CheckDigit returns key completed with its GS1 check digit (mod 10, weights 3 and 1 from the
// right): "950110153000" gives "9501101530003". key is a GTIN, GLN, SSCC, ... without its
// check digit: 1 to 17 digits. The error names what is wrong with key.
func CheckDigit(key string) (string, error) {
	if key == "" {
		return "", &Error{Index: -1, Msg: "key to complete is empty"}
	}
	if len(key) > 17 {
		return "", &Error{Index: -1, Msg: "key " + strconv.Quote(key) + " has " + strconv.Itoa(len(key)) + " digits: a GS1 key without its check digit has at most 17"}
	}
	if err := nonDigit(key); err != nil {
		return "", &Error{Index: -1, Msg: "key " + strconv.Quote(key) + ": " + err.msg}
	}
	return key + string(mod10(key)), nil
}

// csumalpha: the check character pair of GMN (8013) and MUDI (8014), ISO/IEC 7064 mod 1021
// with prime weights, over characters of set 82.
var (
	csumAlphaPrimes = [...]int{
		2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89,
		97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181,
		191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281,
		283, 293, 307, 311, 313, 317, 331, 337, 347, 349, 353, 359, 367, 373, 379, 383, 389, 397,
		401, 409, 419, 421, 431, 433, 439, 443, 449, 457, 461, 463, 467, 479, 487, 491, 499, 503, 509,
	}
	cset82Order = "!\"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
	cset32      = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
)

func lintCsumAlpha(v string) *lintErr {
	n := len(v)
	if n > len(csumAlphaPrimes)+2 {
		return fail(0, n, "is too long for a check character pair")
	}
	if n < 2 {
		return fail(0, n, "is too short for a check character pair")
	}
	sum := 0
	for i := 0; i < n-2; i++ {
		w := -1
		for j := 0; j < len(cset82Order); j++ {
			if cset82Order[j] == v[i] {
				w = j
				break
			}
		}
		if w < 0 {
			return fail(i, 1, "character "+charAt(v, i)+" is not in GS1 character set 82")
		}
		sum += w * csumAlphaPrimes[n-3-i]
	}
	sum %= 1021
	want := string([]byte{cset32[sum>>5], cset32[sum&31]})
	if v[n-2:] != want {
		return fail(n-2, 2, "check characters are "+v[n-2:]+", must be "+want)
	}
	return nil
}

// gcppos1: a GS1 Company Prefix (at least 4 digits) starts the component. Whether it is
// allocated is not looked up.
func lintGCPPos1(v string) *lintErr {
	if len(v) < 4 {
		return fail(0, len(v), "is too short to start with a GS1 Company Prefix")
	}
	for i := 0; i < 4; i++ {
		if !isDigit(v[i]) {
			return fail(i, 1, "does not start with a GS1 Company Prefix: character "+charAt(v, i)+" is not a digit")
		}
	}
	return nil
}

// gcppos2: a GS1 Company Prefix starts at the component's second character.
func lintGCPPos2(v string) *lintErr {
	if len(v) < 2 {
		return fail(0, len(v), "is too short to hold a GS1 Company Prefix")
	}
	if err := lintGCPPos1(v[1:]); err != nil {
		err.pos++
		return err
	}
	return nil
}

// year2 is the century GS1 gives a two-digit year: within 49 years ahead of or 50 behind the
// reference year, which is fixed at 2021 as the reference linters fix it, so that a check does
// not change with the clock. It only matters for 29 February of a year 00.
func year2(yy int) int {
	const ref = 21
	switch {
	case yy-ref >= 51:
		return 1900 + yy
	case yy-ref > -50:
		return 2000 + yy
	default:
		return 2100 + yy
	}
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && year%100 != 0 || year%400 == 0 {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// date checks a date of yearDigits-digit year, month and day; dayZero permits day 00 (a month
// without a day).
func date(v string, yearDigits int, dayZero bool) *lintErr {
	n := yearDigits + 4
	if len(v) != n {
		return fail(0, len(v), "date must be "+strconv.Itoa(n)+" digits")
	}
	if err := nonDigit(v); err != nil {
		return err
	}
	var year int
	if yearDigits == 2 {
		year = year2(atoi2(v))
	} else {
		year = atoi2(v)*100 + atoi2(v[2:])
	}
	mm, dd := atoi2(v[yearDigits:]), atoi2(v[yearDigits+2:])
	if mm < 1 || mm > 12 {
		return fail(yearDigits, 2, "month "+v[yearDigits:yearDigits+2]+" does not exist")
	}
	if dd == 0 && !dayZero {
		return fail(yearDigits+2, 2, "day 00 is not allowed here")
	}
	if dd > daysIn(year, mm) {
		return fail(yearDigits+2, 2, "day "+v[yearDigits+2:]+" does not exist in "+strconv.Itoa(year)+"-"+v[yearDigits:yearDigits+2])
	}
	return nil
}

func lintYYMMD0(v string) *lintErr   { return date(v, 2, true) }
func lintYYMMDD(v string) *lintErr   { return date(v, 2, false) }
func lintYYYYMMD0(v string) *lintErr { return date(v, 4, true) }
func lintYYYYMMDD(v string) *lintErr { return date(v, 4, false) }

func twoDigits(v, what string, max int) *lintErr {
	if len(v) != 2 {
		return fail(0, len(v), what+" must be 2 digits")
	}
	if err := nonDigit(v); err != nil {
		return err
	}
	if atoi2(v) > max {
		return fail(0, 2, what+" "+v+" does not exist (00 to "+strconv.Itoa(max)+")")
	}
	return nil
}

func lintHH(v string) *lintErr { return twoDigits(v, "hour", 23) }
func lintMI(v string) *lintErr { return twoDigits(v, "minute", 59) }
func lintSS(v string) *lintErr { return twoDigits(v, "second", 59) }

func lintHHMI(v string) *lintErr {
	if len(v) != 4 {
		return fail(0, len(v), "time must be 4 digits (HHMI)")
	}
	if err := lintHH(v[:2]); err != nil {
		return err
	}
	if err := lintMI(v[2:]); err != nil {
		err.pos += 2
		return err
	}
	return nil
}

func inList(list []string, v string) bool {
	_, ok := slices.BinarySearch(list, v)
	return ok
}

func lintISO3166(v string) *lintErr {
	if !inList(iso3166Codes, v) {
		return fail(0, len(v), strconv.Quote(v)+" is not an ISO 3166 numeric country code")
	}
	return nil
}

func lintISO3166999(v string) *lintErr {
	if v != "999" && !inList(iso3166Codes, v) {
		return fail(0, len(v), strconv.Quote(v)+" is neither an ISO 3166 numeric country code nor 999")
	}
	return nil
}

func lintISO3166Alpha2(v string) *lintErr {
	if !inList(iso3166Alpha2Codes, v) {
		return fail(0, len(v), strconv.Quote(v)+" is not an ISO 3166 alpha-2 country code")
	}
	return nil
}

func lintISO4217(v string) *lintErr {
	if !inList(iso4217Codes, v) {
		return fail(0, len(v), strconv.Quote(v)+" is not an ISO 4217 numeric currency code")
	}
	return nil
}

func lintPackageType(v string) *lintErr {
	if !inList(packageTypeCodes, v) {
		return fail(0, len(v), strconv.Quote(v)+" is not a package type code (UN/ECE Recommendation 21)")
	}
	return nil
}

func oneOf(v, set, what string) *lintErr {
	if len(v) != 1 {
		return fail(0, len(v), what+" must be one character")
	}
	for i := 0; i < len(set); i++ {
		if v[0] == set[i] {
			return nil
		}
	}
	return fail(0, 1, what+" "+charAt(v, 0)+" is not one of "+set)
}

func lintISO5218(v string) *lintErr { return oneOf(v, "0129", "ISO 5218 sex code") }
func lintYesNo(v string) *lintErr   { return oneOf(v, "01", "yes/no flag") }
func lintWinding(v string) *lintErr { return oneOf(v, "019", "winding direction") }

func lintImporterIdx(v string) *lintErr {
	if len(v) != 1 {
		return fail(0, len(v), "importer index must be one character")
	}
	if !inCset64(v[0]) {
		return fail(0, 1, "importer index "+charAt(v, 0)+" is not one of 0-9 A-Z a-z - _")
	}
	return nil
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// pcenc: every "%" starts a percent-encoded byte, two hexadecimal digits.
func lintPcenc(v string) *lintErr {
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			continue
		}
		if i+2 >= len(v) {
			return fail(i, len(v)-i, "\"%\" is not followed by two hexadecimal digits")
		}
		if !isHex(v[i+1]) || !isHex(v[i+2]) {
			return fail(i, 3, strconv.Quote(v[i:i+3])+" is not a percent-encoded byte")
		}
		i += 2
	}
	return nil
}

func lintNonZero(v string) *lintErr {
	if err := nonDigit(v); err != nil {
		return err
	}
	for i := 0; i < len(v); i++ {
		if v[i] != '0' {
			return nil
		}
	}
	return fail(0, len(v), "must not be zero")
}

func lintZero(v string) *lintErr {
	for i := 0; i < len(v); i++ {
		if v[i] != '0' {
			return fail(0, len(v), "must be 0")
		}
	}
	if v == "" {
		return fail(0, 0, "must be 0")
	}
	return nil
}

func lintNoZeroPrefix(v string) *lintErr {
	if v != "" && v[0] == '0' {
		return fail(0, 1, "must not start with 0")
	}
	return nonDigit(v)
}

func lintHasNonDigit(v string) *lintErr {
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) {
			return nil
		}
	}
	return fail(0, len(v), "must hold a character that is not a digit")
}

func lintHyphen(v string) *lintErr {
	for i := 0; i < len(v); i++ {
		if v[i] != '-' {
			return fail(0, len(v), "must be \"-\"")
		}
	}
	if v == "" {
		return fail(0, 0, "must be \"-\"")
	}
	return nil
}

func degrees(v, what string, max uint64) *lintErr {
	if len(v) != 10 {
		return fail(0, len(v), what+" must be 10 digits")
	}
	if err := nonDigit(v); err != nil {
		return err
	}
	if n, _ := strconv.ParseUint(v, 10, 64); n > max {
		return fail(0, 10, what+" "+v+" is above "+strconv.FormatUint(max, 10))
	}
	return nil
}

func lintLatitude(v string) *lintErr  { return degrees(v, "latitude", 1800000000) }
func lintLongitude(v string) *lintErr { return degrees(v, "longitude", 3600000000) }

// pieceoftotal: a piece number and a total of equal lengths, neither zero, the piece not
// above the total.
func lintPieceOfTotal(v string) *lintErr {
	if err := nonDigit(v); err != nil {
		return err
	}
	if v == "" || len(v)%2 != 0 {
		return fail(0, len(v), "piece and total must be of equal lengths")
	}
	h := len(v) / 2
	p, t := v[:h], v[h:]
	if lintNonZero(p) != nil {
		return fail(0, h, "piece number must not be 0")
	}
	if lintNonZero(t) != nil {
		return fail(h, h, "total number of pieces must not be 0")
	}
	if p > t {
		return fail(0, len(v), "piece "+p+" is above the total "+t)
	}
	return nil
}

// posinseqslash: "position/end", both without leading zeros, position not above end.
func lintPosInSeqSlash(v string) *lintErr {
	i := 0
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	malformed := fail(0, len(v), "must be position/total, such as 1/3")
	if i == 0 || i >= len(v)-1 || v[i] != '/' {
		return malformed
	}
	pos, end := v[:i], v[i+1:]
	if nonDigit(end) != nil {
		return malformed
	}
	if pos[0] == '0' {
		return fail(0, len(pos), "position must not start with 0")
	}
	if end[0] == '0' {
		return fail(i+1, len(end), "total must not start with 0")
	}
	if len(pos) > len(end) || len(pos) == len(end) && pos > end {
		return fail(0, len(v), "position "+pos+" is above the total "+end)
	}
	return nil
}

// mediatype: AIDC media type 01 to 10 (ICCBBA) or 80 to 99 (local use).
func lintMediaType(v string) *lintErr {
	if len(v) == 2 && isDigit(v[0]) && isDigit(v[1]) {
		if n := atoi2(v); n >= 1 && n <= 10 || n >= 80 {
			return nil
		}
	}
	return fail(0, len(v), strconv.Quote(v)+" is not an AIDC media type (01 to 10, 80 to 99)")
}

// iban: an ISO 13616 International Bank Account Number: country code, check digits (mod 97).
func lintIBAN(v string) *lintErr {
	n := len(v)
	if n < 4 {
		return fail(0, n, "IBAN is too short")
	}
	if !inList(iso3166Alpha2Codes, v[:2]) {
		return fail(0, 2, "IBAN country code "+strconv.Quote(v[:2])+" is not an ISO 3166 alpha-2 code")
	}
	if n > 34 {
		return fail(0, n, "IBAN is longer than 34 characters")
	}
	if n <= 10 {
		return fail(0, n, "IBAN is too short")
	}
	sum := 0
	for k := 4; k < n+4; k++ {
		i := k
		if i >= n {
			i -= n
		}
		c := v[i]
		var w int
		switch {
		case isDigit(c):
			w = int(c - '0')
			sum = sum * 10
		case c >= 'A' && c <= 'Z':
			w = int(c-'A') + 10
			sum = sum * 100
		default:
			return fail(i, 1, "IBAN character "+charAt(v, i)+" is not 0-9 or A-Z")
		}
		sum = (sum + w) % 97
	}
	if sum != 1 {
		return fail(2, 2, "IBAN check digits "+v[2:4]+" are wrong")
	}
	return nil
}
