// Package gs1 checks GS1 element strings against GS1's Barcode Syntax Dictionary before they
// are printed: each Application Identifier (AI) known, its value's length and character set,
// its check digits, dates and the dictionary's other content rules ("linters"), and the AIs
// that must or must not appear together.
//
//	els, err := gs1.ParseBracketed("(01)09501101530003(17)261231(10)AB12")
//	if err == nil {
//		err = gs1.Check(els) // every problem, each an *Error naming the AI and its index
//	}
//	key, _ := gs1.CheckDigit("950110153000") // "9501101530003"
//
// # What is checked
//
// The AI table is generated from the dictionary file kept beside it ([DictionaryVersion];
// go generate writes ai_table.go). [Check] reports, for each element: an AI the dictionary
// does not list; an empty value; a value too short or too long for the AI's components; a
// character outside the component's set (N digits, X GS1 character set 82, Y set 39, Z
// base64url); every linter of the component but two (see below): check digits (csum, the
// check character pair csumalpha), dates and times (yymmd0, yymmdd, yyyymmd0, yyyymmdd, hh,
// mi, ss, hhmi), GS1 Company Prefix position (gcppos1, gcppos2: four digits, no look-up of
// allocated prefixes), country and currency codes (iso3166, iso3166999, iso3166alpha2,
// iso4217), IBAN, importer index, percent-encoding (pcenc), latitude and longitude, piece of
// total, position in sequence, and the small code sets (yesno, winding, zero, nonzero,
// hyphen, nozeroprefix, hasnondigit, iso5218, mediatype, packagetype). Over the whole string it
// reports each req (an AI that needs another: "AI (02) needs AI (37)") and ex (an AI that
// excludes another) on the entry of the AI that has the rule, an AI repeated with a different
// value, and a key without its serial component beside a digital signature (8030), as GS1's
// Syntax Engine does.
//
// Not checked: the coupon linters couponcode and couponposoffer (AIs 8110 and 8112 are still
// checked for length and character set); whether a GS1 Company Prefix is allocated; and the
// GS1 Digital Link rules (dlpkey, kept in the table).
//
// # Raw strings
//
// [ParseRaw] reads an element string as a barcode carries it: an AI, its value, and a GS
// (0x1D, FNC1) after a variable-length value when another element follows; the value of an AI
// with a predefined length (01, 17, ...) ends at that length without a GS. [Raw] writes one.
package gs1

//go:generate go run gen.go

import "sort"

// GS is the ASCII group separator, which stands for FNC1 between elements of a raw string.
const GS = '\x1d'

// Element is one AI and its value, as written in "(01)09501101530003".
type Element struct {
	// AI is the Application Identifier's digits: "01", "3103", "8030".
	AI string
	// Value is the data after it.
	Value string
}

// entry is one AI of the dictionary.
type entry struct {
	ai    string
	title string
	// fixed: the dictionary's "*" flag, a predefined length that needs no GS after it.
	fixed bool
	// dlAttr: "?", permitted as a GS1 Digital Link data attribute.
	dlAttr bool
	parts  []part
	// req: each req= attribute, satisfied when every AI of one of its groups is present.
	req [][][]string
	// ex: AI patterns ("01", "394n") that must not appear with this AI.
	ex []string
	// dlpkey: a GS1 Digital Link primary key, with its qualifier sequences as written.
	dlpkey           bool
	dlpkeyQualifiers string
}

// part is one component of a value: its character set (N, X, Y, Z), length and linters.
type part struct {
	cset     byte
	min, max int
	opt      bool
	linters  []string
}

func (e *entry) minLen() int {
	n := 0
	for _, p := range e.parts {
		if !p.opt {
			n += p.min
		}
	}
	return n
}

func (e *entry) maxLen() int {
	n := 0
	for _, p := range e.parts {
		n += p.max
	}
	return n
}

// lookup returns the dictionary's entry for ai, or nil.
func lookup(ai string) *entry {
	// By index: an entry is too large to copy at each comparison.
	i := sort.Search(len(table), func(i int) bool { return table[i].ai >= ai })
	if i == len(table) || table[i].ai != ai {
		return nil
	}
	return &table[i]
}

// lookupPrefix returns the entry whose AI begins s (the table is prefix-free), or nil.
func lookupPrefix(s string) *entry {
	for n := 2; n <= 4 && n <= len(s); n++ {
		if e := lookup(s[:n]); e != nil {
			return e
		}
	}
	return nil
}

// Title returns the dictionary's data title of ai ("GTIN", "BATCH/LOT"), and false when the
// dictionary does not list ai.
func Title(ai string) (string, bool) {
	e := lookup(ai)
	if e == nil {
		return "", false
	}
	return e.title, true
}

// PredefinedLength reports whether ai's value has a predefined length, so that no GS follows
// it in a raw string (AIs 00, 01, 11, 17, 3103, 410, ...). Unknown AIs report false.
func PredefinedLength(ai string) bool {
	e := lookup(ai)
	return e != nil && e.fixed
}
