package gs1

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// valueErrs returns the problems of elements alone (AI, value), leaving out the pairs.
func valueErrs(els []Element) []*Error {
	var out []*Error
	for _, e := range Errors(els) {
		if e.Field != "" {
			out = append(out, e)
		}
	}
	return out
}

// TestSyntaxEngineLinterCases: GS1 Syntax Engine's test_ai_linters (src/c-lib/ai.c), each
// element string that one linter rejects, rejected here for the right AI; the valid ones pass.
func TestSyntaxEngineLinterCases(t *testing.T) {
	for _, c := range []struct{ in, badAI string }{
		{"(00)123456789012345675", ""},
		{"(00)A23456789012345675", "00"},
		{"(10) ", "10"},
		{"(8010)123456_", "8010"},
		{"(8030)ABC:123", "8030"},
		{"(8030)123=", "8030"},
		{"(00)123456789012345670", "00"},
		{"(8013)123456ABXX", "8013"},
		{"(8013)A", "8013"},
		{"(401)123", "401"},
		{"(7023)12A4", "7023"},
		{"(7040)1AB=", "7040"},
		{"(8001)12340000012311", "8001"},
		{"(8003)112345678901281234567890123456", "8003"},
		{"(8011)023456789012", "8011"},
		{"(4321)2", "4321"},
		{"(8001)12341234512321", "8001"},
		{"(426)987", "426"},
		{"(7030)987ABC", "7030"},
		{"(4307)AA", "4307"},
		{"(3910)9870", "3910"},
		{"(8007)FR1234", "8007"},
		{"(8007)FR12_45678901234", "8007"},
		{"(8007)AB12345678901234", "8007"},
		{"(8007)FR12345678901234", "8007"},
		{"(4326)201300", "4326"},
		{"(4326)201200", "4326"},
		{"(4324)2012252400", "4324"},
		{"(4324)2012252360", "4324"},
		{"(8008)201225230060", "8008"},
		{"(8026)123456789012310099", "8026"},
		{"(8026)123456789012310100", "8026"},
		{"(8026)123456789012310302", "8026"},
		{"(4300)ABC%0g", "4300"},
		{"(4309)18000000010000000000", "4309"},
		{"(4309)00000000003600000001", "4309"},
		{"(4330)000000X", "4330"},
		{"(7252)5", "7252"},
		{"(7258)111", "7258"},
		{"(7258)0/3", "7258"},
		{"(7258)2/1", "7258"},
		{"(01)95012345678903(3103)000123", ""},
		{"(01)95012345678902(3103)000123", "01"},
		{"(01)95012345678903(11)131313", "11"},
	} {
		els, err := ParseBracketed(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		errs := valueErrs(els)
		if c.badAI == "" {
			if len(errs) > 0 {
				t.Errorf("%s: %v", c.in, errs[0])
			}
			continue
		}
		if len(errs) != 1 || errs[0].AI != c.badAI || errs[0].Field != "value" || !strings.HasPrefix(errs[0].Msg, "AI ("+c.badAI+")") {
			t.Errorf("%s: want one problem of AI (%s)'s value, got %v", c.in, c.badAI, errs)
		}
	}
}

// TestSyntaxEngineRawCases: test_ai_processAIdata, raw strings ("^" is FNC1, here GS), each
// valid one split and passing, each invalid one refused by ParseRaw or by Check.
func TestSyntaxEngineRawCases(t *testing.T) {
	for _, c := range []struct {
		ok bool
		in string
	}{
		{false, ""}, {false, "^"}, {false, "^891234"}, {true, "^991234"},
		{false, "^99~ABC"}, {false, "^99ABC~"},
		{true, "^0112345678901231"}, {false, "^01A2345678901231"}, {false, "^011234567890123A"},
		{false, "^0112345678901234"}, {false, "^011234567890123"}, {false, "^01123456789012312"},
		{true, "^0112345678901231^"}, {false, "^011234567890123^"}, {false, "^01123456789012345^"},
		{false, "^01123456789012345^991234"},
		{true, "^0112345678901231991234"}, {true, "^0112345678901231^991234"},
		{true, "^2421"}, {true, "^242123456"}, {true, "^242123456^10ABC123"}, {true, "^242123456^"},
		{false, "^2421234567"},
		{true, "^81111234"}, {false, "^8111123"}, {false, "^811112345"}, {true, "^81111234^10ABC123"},
		{true, "^800112341234512398"}, {false, "^80011234123451239"}, {false, "^8001123412345123981"},
		{true, "^800112341234512398^0112345678901231"}, {false, "^80011234123451239^0112345678901231"},
		{false, "^8001123412345123981^01123456789012312"},
		{true, "^7007211225211231"}, {true, "^7007211225"}, {false, "^70072112252"},
		{false, "^700721122521"}, {false, "^7007211225211"}, {false, "^70072112252112"},
		{false, "^700721122521123"}, {false, "^70072112252212311"},
		{true, "^800302112345678900ABC"}, {false, "^800302112345678901ABC"}, {true, "^800302112345678900"},
		{true, "^800302112345678900^10ABC123"}, {true, "^800302112345678900ABCDEFGHIJKLMNOP"},
		{false, "^800302112345678900ABCDEFGHIJKLMNOPQ"},
		{true, "^7230121234567890123456789012345678"}, {false, "^72301212345678901234567890123456789"},
		{true, "^7230123"}, {false, "^723012"},
		{true, "^235ABC"}, {true, "^235ABCDEFGHIJKLMNOPQRSTUVWXYZ12"}, {false, "^235ABCDEFGHIJKLMNOPQRSTUVWXYZ123"},
		{true, "^0112345678901231235XYZ"}, {true, "^0112345678901231235XYZ^10BATCH"},
	} {
		raw := strings.ReplaceAll(c.in, "^", string(GS))
		els, err := ParseRaw(raw)
		if err == nil && len(valueErrs(els)) > 0 {
			err = valueErrs(els)[0]
		}
		if c.ok && err != nil {
			t.Errorf("%q: %v", c.in, err)
		}
		if !c.ok && err == nil {
			t.Errorf("%q: accepted as %v", c.in, els)
		}
	}
	els, err := ParseRaw("0112345678901231235XYZ\x1d10BATCH")
	want := []Element{{"01", "12345678901231"}, {"235", "XYZ"}, {"10", "BATCH"}}
	if err != nil || !reflect.DeepEqual(els, want) {
		t.Errorf("ParseRaw: %v, %v; want %v", els, err, want)
	}
	if got := Raw(want); got != "0112345678901231235XYZ\x1d10BATCH" {
		t.Errorf("Raw: %q", got)
	}
}

// TestSyntaxEngineBracketedCases: test_ai_parseAIdata, bracketed strings.
func TestSyntaxEngineBracketedCases(t *testing.T) {
	for _, c := range []struct {
		ok  bool
		in  string
		raw string // what Raw writes, "^" for GS
	}{
		{true, "(01)12345678901231", "0112345678901231"},
		{true, "(10)12345", "1012345"},
		{true, "(01)12345678901231(10)12345", "01123456789012311012345"},
		{true, "(3100)123456(10)12345", "31001234561012345"},
		{true, "(10)12345(11)991225", "1012345^11991225"},
		{true, "(3900)12345(11)991225", "390012345^11991225"},
		{true, `(10)12345\(11)991225`, "1012345(11)991225"},
		{true, `(10)12345\(`, "1012345("},
		{true, "(235)ABC", "235ABC"},
		{true, "(01)12345678901231(235)XYZ(10)BATCH", "0112345678901231235XYZ^10BATCH"},
		{true, "(235)ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "235ABCDEFGHIJKLMNOPQRSTUVWXYZ12"},
		{false, "(235)ABCDEFGHIJKLMNOPQRSTUVWXYZ123", ""},
		{false, "(10)(11)98765", ""}, {false, "(10)12345(11)", ""}, {false, "(1A)12345", ""},
		{false, "1(12345", ""}, {false, "12345", ""}, {false, "()12345", ""}, {false, "(1)12345", ""},
		{false, "(12345)12345", ""}, {false, "(15", ""}, {false, "(1", ""}, {false, "(", ""},
		{false, "(01)123456789012312(10)12345", ""}, {false, "(17)9(90)217", ""},
		{true, "(99)" + strings.Repeat("A", 90), "99" + strings.Repeat("A", 90)},
		{false, "(99)" + strings.Repeat("A", 91), ""},
	} {
		els, err := ParseBracketed(c.in)
		if err == nil {
			if errs := valueErrs(els); len(errs) > 0 {
				err = errs[0]
			}
		}
		if c.ok != (err == nil) {
			t.Errorf("%q: ok %v, err %v", c.in, c.ok, err)
			continue
		}
		if !c.ok {
			continue
		}
		raw := strings.ReplaceAll(c.raw, "^", string(GS))
		if got := Raw(els); got != raw {
			t.Errorf("%q: Raw %q, want %q", c.in, got, raw)
		}
		if back := Bracketed(els); back != c.in {
			t.Errorf("%q: Bracketed %q", c.in, back)
		}
	}
	var se *SyntaxError
	if _, err := ParseBracketed("(01)12345678901231(1A)x"); !errors.As(err, &se) || se.Offset != 19 || !strings.Contains(err.Error(), `"1A"`) {
		t.Errorf("syntax error: %v", err)
	}
}

// TestSyntaxEnginePairCases: test_ai_validateAIs, the req, ex, repeated-AI and digital
// signature rules, each failing case reported on the entry of the AI that has the rule.
func TestSyntaxEnginePairCases(t *testing.T) {
	for _, c := range []struct {
		kind, in, badAI string // badAI "": nothing of this kind reported
	}{
		{"appears again", "(400)ABC", ""},
		{"appears again", "(400)ABC(400)ABC", ""},
		{"appears again", "(400)ABC(99)DEF(400)ABC", ""},
		{"appears again", "(99)ABC(400)XYZ(400)XYZ", ""},
		{"appears again", "(400)ABC(400)AB", "400"},
		{"appears again", "(400)ABC(400)ABCD", "400"},
		{"appears again", "(400)ABC(400)ABC(400)XYZ", "400"},
		{"appears again", "(400)ABC(99)DEF(400)XYZ", "400"},
		{"must not appear", "(01)12345678901231(02)12345678901231", "02"},
		{"must not appear", "(99)ABC123(01)12345678901231(02)12345678901231", "02"},
		{"must not appear", "(01)12345678901231(255)5412345000150", "01"},
		{"must not appear", "(01)12345678901231(37)123", "01"},
		{"must not appear", "(21)ABC123(235)XYZ", "21"},
		{"must not appear", "(3940)1234(8111)9999", "3940"},
		{"must not appear", "(3940)1234(3941)9999", "3941"},
		{"must not appear", "(3955)123456(3929)123", "3955"},
		{"needs", "(02)12345678901231", "02"},
		{"needs", "(02)12345678901231(37)123", "37"},
		{"needs", "(02)12345678901231(99)AAA(37)123", "37"},
		{"needs", "(02)12345678901231(37)123(00)123456789012345675", ""},
		{"needs", "(91)XXX(02)12345678901231(92)YYY(37)123(93)ZZZ(00)123456789012345675", ""},
		{"needs", "(21)ABC123", "21"},
		{"needs", "(21)ABC123(01)12345678901231", ""},
		{"needs", "(21)ABC123(8006)123456789012310510", ""},
		{"needs", "(01)12345678901231(250)ABC123", "250"},
		{"needs", "(01)12345678901231(21)XYZ999(250)ABC123", ""},
		{"needs", "(01)12345678901231(3925)12599", "3925"},
		{"needs", "(01)12345678901231(3925)12599(30)123", ""},
		{"needs", "(01)12345678901231(3925)12599(3100)654321", ""},
		{"needs", "(01)12345678901231(3925)12599(3165)654321", ""},
		{"needs", "(01)12345678901231(3925)12599(3695)654321", ""},
		{"needs", "(8030)DIGSIG", "8030"},
		{"needs", "(8030)DIGSIG(00)123456789012345675", ""},
		{"needs", "(8030)DIGSIG(01)12345678901231", "8030"},
		{"needs", "(8030)DIGSIG(01)12345678901231(21)ABC123", ""},
		{"needs", "(8030)DIGSIG(253)1234567890128X", ""},
		{"needs", "(8030)DIGSIG(8006)123456789012310102", "8030"},
		{"needs", "(8030)DIGSIG(8010)1234567890(8011)123456789012", ""},
		{"needs", "(8030)DIGSIG(8018)123456789012345675", ""},
		{"serial component", "(253)1234567890128", ""},
		{"serial component", "(253)1234567890128(8030)ABC123", "253"},
		{"serial component", "(253)1234567890128X(8030)ABC123", ""},
		{"serial component", "(255)1234567890128(8030)ABC123", "255"},
		{"serial component", "(255)12345678901280(8030)ABC123", ""},
		{"serial component", "(8003)01234567890128(8030)ABC123", "8003"},
		{"serial component", "(8003)01234567890128X(8030)ABC123", ""},
	} {
		els, err := ParseBracketed(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if errs := valueErrs(els); len(errs) > 0 && c.kind != "serial component" && c.kind != "appears again" {
			t.Errorf("%s: %v", c.in, errs[0])
		}
		var found []*Error
		for _, e := range Errors(els) {
			if strings.Contains(e.Msg, c.kind) {
				found = append(found, e)
			}
		}
		if c.badAI == "" {
			if len(found) > 0 {
				t.Errorf("%s: %v", c.in, found[0])
			}
			continue
		}
		ok := false
		for _, e := range found {
			if e.AI == c.badAI && els[e.Index].AI == c.badAI && strings.HasPrefix(e.Msg, "AI ("+c.badAI+")") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: want a %q problem on AI (%s), got %v", c.in, c.kind, c.badAI, found)
		}
	}
}

// TestCheckMessages: the problems read as the label's lint prints them.
func TestCheckMessages(t *testing.T) {
	els, _ := ParseBracketed("(02)09501101530003(17)261331(10)AB 12(89)X")
	err := Check(els)
	want := []string{
		"element 0: AI (02) needs AI (37)",
		`element 1: AI (17): month 13 does not exist (in "261331")`,
		`element 2: AI (10): character ' ' is not in GS1 character set 82 (position 3 of "AB 12")`,
		"element 3: AI (89) is not in the GS1 Barcode Syntax Dictionary",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("got:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	var e *Error
	if !errors.As(err, &e) || e.Index != 0 || e.AI != "02" {
		t.Fatalf("errors.As: %+v", e)
	}
	if err := Check([]Element{{"10", "X"}, {"3103", "000100"}}); err == nil || !strings.Contains(err.Error(), "element 0: AI (10) needs AI (01), (02), (03), (8006) or (8026)\n") {
		t.Fatalf("req message: %v", err)
	}
	if Check([]Element{{"01", "09501101530003"}, {"17", "261231"}, {"10", "AB12"}}) != nil {
		t.Fatal("a valid string is refused")
	}
}

// TestPublishedExamples: element strings of GS1's own examples (the General Specifications'
// GS1-128 figure, the Syntax Engine's README examples, GS1's example keys as its Digital Link
// and logistic label examples use them) pass; each with one character changed or one element
// added is rejected for that AI.
func TestPublishedExamples(t *testing.T) {
	for _, c := range []struct {
		valid, invalid, badAI string
	}{
		{"(01)95012345678903(3103)000123", "(01)95012345678903(3103)00012A", "3103"},
		{"(01)09521234543213(99)TESTING123", "(01)09521234543213(99)TESTING 123", "99"},
		{"(01)12312312312333(10)ABC123(99)TEST", "(01)12312312312334(10)ABC123(99)TEST", "01"},
		{"(01)09501101530003(17)261231(10)AB12", "(01)09501101530003(17)261231(10)AB12|", "10"},
		{"(01)09506000134352(17)201225(10)ABC123", "(01)09506000134352(17)200229(10)ABC123(17)201225", "17"},
		{"(01)09506000134376(10)AB-123(21)XYZ", "(01)09506000134376(10)AB-123(21)XYZ(235)TPX1", "21"},
		{"(00)106141411234567897(02)09506000134352(37)10", "(00)106141411234567897(02)09506000134352(37)1a", "37"},
		{"(00)106141411234567897(420)12345(410)9501101020917", "(00)106141411234567897(420)12345(410)9501101020918", "410"},
		{"(414)9501101020917(254)32a%b", "(414)9501101020917(254)32a%b(7040)1AB~", "7040"},
		{"(01)04012345123456(30)12(3922)795(15)260630", "(01)04012345123456(30)12(3922)795(15)260631", "15"},
		{"(8004)9501101020917AB(7040)1AB_", "(8004)9501101020917AB(7040)1AB_(4307)XX", "4307"},
	} {
		els, err := ParseBracketed(c.valid)
		if err == nil {
			err = Check(els)
		}
		if err != nil {
			t.Errorf("%s: %v", c.valid, err)
		}
		els, err = ParseBracketed(c.invalid)
		if err != nil {
			t.Fatalf("%s: %v", c.invalid, err)
		}
		errs := Errors(els)
		if len(errs) == 0 {
			t.Errorf("%s: accepted", c.invalid)
			continue
		}
		for _, e := range errs {
			if e.AI != c.badAI || els[e.Index].AI != c.badAI {
				t.Errorf("%s: %v, want problems of AI (%s) only", c.invalid, e, c.badAI)
			}
		}
	}
}

// TestRuleErrors: RuleErrors reports the req and ex rules as Errors does, on the same
// elements with the same messages, and nothing else (no value problem, no repeated AI with
// another value); name names the other element of an exclusion.
func TestRuleErrors(t *testing.T) {
	for _, in := range []string{
		"(01)12345678901231(02)12345678901231",
		"(99)ABC123(01)12345678901231(02)12345678901231",
		"(01)12345678901231(37)123",
		"(02)12345678901231",
		"(02)12345678901231(37)123(00)123456789012345675",
		"(21)ABC123(01)12345678901231",
		"(8030)DIGSIG(01)12345678901231",
		"(01)12345678901234(17)261332(21)A B",       // value problems only
		"(400)ABC(400)XYZ(10)LOT",                   // a repeat with another value, and (10) needs (01)
		"(01)12345678901231(3925)12599(3165)654321", // no problem
	} {
		els, err := ParseBracketed(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want []string
		for _, e := range Errors(els) {
			if e.Field == "" {
				want = append(want, e.Error())
			}
		}
		var got []string
		for _, e := range RuleErrors(els, nil) {
			got = append(got, e.Error())
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", in, got, want)
		}
	}
	els, _ := ParseBracketed("(01)12345678901231(02)12345678901231")
	errs := RuleErrors(els, func(j int) string { return "symbol " + strconv.Itoa(j+1) })
	if len(errs) != 2 || errs[0].Msg != "AI (02) must not appear with AI (01) (symbol 1)" || errs[1].Msg != "AI (02) needs AI (37)" {
		t.Errorf("named: %v", errs)
	}
}
