package gs1

import (
	"strings"
	"testing"
)

// TestLinters: each linter on values of the reference linters' own unit tests (GS1 Barcode
// Syntax Dictionary, src/lint_*.c), the failing ones with the byte the reference marks.
func TestLinters(t *testing.T) {
	type tc struct {
		v   string
		pos int // -1: passes; else the first byte the problem marks
	}
	pass := func(v string) tc { return tc{v, -1} }
	cases := map[string][]tc{
		"csum": {pass("02345673"), {"12345673", 7}, pass("416000336108"), {"416000336109", 11},
			pass("1234567890128"), {"1234567890129", 12}, pass("12345678901231"), {"12345678901232", 13},
			pass("123456789012345675"), {"123456789012345670", 17}, {" 23456789012345675", 0},
			{"12345678 012345675", 8}, {"12345678901234567 ", 17}, {"", 0}},
		"csumalpha": {{"", 0}, {"2", 0}, pass("22"), {"33", 0}, pass("!22"), pass("1987654Ad4X4bL5ttr2310c2K"),
			{"1987654Ad4X4bL5ttr2310cXK", 23}, {"1987654Ad4X4bL5ttr2310c2X", 23}, pass("12345678901234567890123NT"),
			pass("12345_ABCDEFGHIJKLMCP"), pass("12345_!\"%&'()*+,-./LC"), pass("12345_0123456789:;<=>?62"),
			pass("7907665Bm8v2AB"), pass("149512464PM+GH"), pass("23956qk1&dB!23"), pass("00000!HV"),
			pass("99999zzzzzzzzzzzzzzzzzzT2"), {" 2345678901234567890123NT", 0}, {"123456789 1234567890123NT", 9},
			{"12345678901234567890123 T", 23}},
		"yymmd0": {pass("000606"), pass("990606"), pass("200131"), {"x00131", 0}, {"20013x", 5}, {"11111", 0},
			{"1111111", 0}, {"200010", 2}, {"201310", 2}, {"200132", 4}, pass("200229"), {"200230", 4},
			{"200431", 4}, pass("200430"), {"210229", 4}, pass("240229"), pass("000229"), pass("201200")},
		"yymmdd":        {pass("200131"), {"201200", 4}, {"200132", 4}, {"200013", 2}},
		"yyyymmd0":      {pass("20000229"), {"19000229", 6}, pass("20240200"), {"20241301", 4}, {"2024010", 0}},
		"yyyymmdd":      {pass("20000229"), {"20240200", 6}, pass("20241231"), {"20241232", 6}},
		"hh":            {pass("00"), pass("23"), {"24", 0}, {"2x", 1}},
		"mi":            {pass("59"), {"60", 0}},
		"ss":            {pass("59"), {"60", 0}},
		"hhmi":          {pass("2359"), {"2400", 0}, {"2360", 2}, {"235", 0}},
		"gcppos1":       {pass("1234"), {"123", 0}, {"12A4", 2}, pass("1234ABC")},
		"gcppos2":       {pass("01234"), {"0123", 1}, {"012A4", 3}, {"0", 0}},
		"iso3166":       {pass("004"), pass("894"), {"000", 0}, {"987", 0}, {"12", 0}, {"999", 0}},
		"iso3166999":    {pass("999"), pass("826"), {"987", 0}},
		"iso3166alpha2": {pass("GB"), pass("ZW"), {"AA", 0}, {"gb", 0}, {"G", 0}},
		"iso4217":       {pass("978"), pass("840"), {"987", 0}, {"97", 0}},
		"iso5218":       {pass("0"), pass("9"), {"5", 0}, {"", 0}},
		"iban": {pass("GB82WEST12345698765432"), {"FR1234", 0}, {"FR12_45678901234", 4}, {"AB12345678901234", 0},
			{"FR12345678901234", 2}, pass("FR1420041010050500013M02606")},
		"importeridx":   {pass("-"), pass("0"), pass("_"), pass("z"), {"[", 0}, {"=", 0}, {"AB", 0}},
		"pcenc":         {pass("ABC"), pass("A%20B"), {"ABC%0g", 3}, {"AB%2", 2}, {"%", 0}},
		"nonzero":       {pass("0001"), {"0000", 0}, {"00x0", 2}},
		"zero":          {pass("0"), {"1", 0}, {"", 0}},
		"nozeroprefix":  {pass("1"), pass("10"), {"01", 0}, {"1x", 1}},
		"hasnondigit":   {pass("12A"), {"123", 0}},
		"hyphen":        {pass("-"), {"X", 0}, {"", 0}},
		"yesno":         {pass("0"), pass("1"), {"2", 0}},
		"winding":       {pass("0"), pass("1"), pass("9"), {"2", 0}},
		"latitude":      {pass("1800000000"), {"1800000001", 0}, {"180000000", 0}},
		"longitude":     {pass("3600000000"), {"3600000001", 0}},
		"pieceoftotal":  {pass("0102"), pass("0202"), {"0002", 0}, {"0100", 2}, {"0302", 0}, {"010", 0}},
		"posinseqslash": {pass("1/2"), pass("2/2"), pass("9/10"), {"111", 0}, {"0/3", 0}, {"2/1", 0}, {"1/03", 2}, {"10/9", 0}, {"1/", 0}},
		"mediatype":     {pass("01"), pass("10"), pass("80"), pass("99"), {"00", 0}, {"11", 0}, {"79", 0}, {"1", 0}},
		"packagetype":   {pass("1A"), pass("BX"), pass("ZZ"), {"ZZZ", 0}, {"1a", 0}},
	}
	csetCases := map[byte][]tc{
		'N': {pass("0123456789"), {"12a", 2}},
		'X': {pass("!\"%&'()*+,-./09:;<=>?AZ_az"), {"AB ", 2}, {"A#", 1}, {"é", 0}},
		'Y': {pass("#-/09AZ"), {"123456_", 6}, {"a", 0}},
		'Z': {pass("AZaz09-_"), pass("12="), pass("1=="), {"===", 0}, {"ABC:123", 3}, {"123=", 3}, {"12==", 2}, {"1234=", 4}},
	}
	run := func(name string, f linter, cs []tc) {
		for _, c := range cs {
			err := f(c.v)
			switch {
			case c.pos < 0 && err != nil:
				t.Errorf("%s(%q): %s", name, c.v, err.msg)
			case c.pos >= 0 && err == nil:
				t.Errorf("%s(%q): passes, want a problem at byte %d", name, c.v, c.pos)
			case c.pos >= 0 && err.pos != c.pos:
				t.Errorf("%s(%q): problem at byte %d (%s), want %d", name, c.v, err.pos, err.msg, c.pos)
			}
		}
	}
	for name, cs := range cases {
		f := linters[name]
		if f == nil {
			t.Errorf("linter %s not implemented", name)
			continue
		}
		run(name, f, cs)
	}
	for c, cs := range csetCases {
		run("cset "+string(c), csets[c], cs)
	}
}

// TestLintersCoverDictionary: every linter the dictionary names is implemented, but the two
// the package documents as not checked.
func TestLintersCoverDictionary(t *testing.T) {
	skipped := map[string]bool{}
	for _, e := range table {
		for _, p := range e.parts {
			for _, l := range p.linters {
				if linters[l] == nil {
					skipped[l] = true
				}
			}
		}
	}
	var names []string
	for l := range skipped {
		names = append(names, l)
	}
	if len(names) != 2 || !skipped["couponcode"] || !skipped["couponposoffer"] {
		t.Fatalf("linters of the dictionary not implemented: %s; the package doc names couponcode and couponposoffer", strings.Join(names, ", "))
	}
}

func TestCheckDigit(t *testing.T) {
	for in, want := range map[string]string{
		"950110153000":      "9501101530003",
		"0950110153000":     "09501101530003",
		"12345678901":       "123456789012",
		"1234567890123":     "12345678901231",
		"12345678901234567": "123456789012345675",
		"9":                 "93",
	} {
		got, err := CheckDigit(in)
		if err != nil || got != want {
			t.Errorf("CheckDigit(%q) = %q, %v; want %q", in, got, err, want)
		}
		if lintCsum(got) != nil {
			t.Errorf("csum rejects CheckDigit(%q) = %q", in, got)
		}
	}
	for _, bad := range []string{"", "12a4", "123456789012345678", " 1"} {
		if got, err := CheckDigit(bad); err == nil {
			t.Errorf("CheckDigit(%q) = %q, want an error", bad, got)
		} else if bad != "" && !strings.Contains(err.Error(), bad) {
			t.Errorf("CheckDigit(%q): %v does not name the key", bad, err)
		}
	}
}
