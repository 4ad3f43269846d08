package gs1

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: ParseBracketed and ParseRaw never panic, and neither does Check on what they
// give; what ParseBracketed accepts is written back by Bracketed and parsed again the same;
// elements that pass Check are written by Raw and split again by ParseRaw the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"(01)09501101530003(17)261231(10)AB12",
		`(10)12345\(11)991225`,
		"(8030)DIGSIG(253)1234567890128X",
		"(7007)211225211231(8003)02112345678900ABC",
		"0112345678901231235XYZ\x1d10BATCH",
		"\x1d800112341234512398\x1d0112345678901231",
		"(02)12345678901231(37)123(00)123456789012345675",
		"(8007)GB82WEST12345698765432(415)9501101020917(8020)X",
		"(4309)18000000010000000000(4330)000000-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) ([]Element, error){ParseBracketed, ParseRaw} {
			els, err := parse(s)
			if err != nil {
				if els != nil {
					t.Fatalf("%q: elements %v beside error %v", s, els, err)
				}
				continue
			}
			errs := Errors(els)
			for _, e := range errs {
				if e.Index < 0 || e.Index >= len(els) || e.AI != els[e.Index].AI || !strings.HasPrefix(e.Msg, "AI ") {
					t.Fatalf("%q: problem %+v does not name its element", s, e)
				}
			}
			if (Check(els) == nil) != (len(errs) == 0) {
				t.Fatalf("%q: Check and Errors disagree", s)
			}
			again, err := ParseBracketed(Bracketed(els))
			if endsInBackslash(els) {
				// Not representable in GS1's bracketed syntax (see Bracketed); never valid.
				if len(errs) == 0 {
					t.Fatalf("%q: a value ending in a backslash passed Check", s)
				}
			} else if err != nil || !reflect.DeepEqual(again, els) {
				t.Fatalf("%q: Bracketed %q parses to %v, %v; want %v", s, Bracketed(els), again, err, els)
			}
			if len(errs) == 0 {
				again, err := ParseRaw(Raw(els))
				if err != nil || !reflect.DeepEqual(again, els) {
					t.Fatalf("%q: Raw %q parses to %v, %v; want %v", s, Raw(els), again, err, els)
				}
			}
		}
	})
}

// endsInBackslash reports whether a value other than the last ends in a backslash.
func endsInBackslash(els []Element) bool {
	for _, el := range els[:max(len(els)-1, 0)] {
		if strings.HasSuffix(el.Value, `\`) {
			return true
		}
	}
	return false
}
