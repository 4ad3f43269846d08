package label

import (
	"reflect"
	"strings"
	"testing"
)

// TestSymbologyData: each symbology's character set and capacity, as Validate names them; a
// -Plain string's leading GS; data of dynamic text is checked once filled.
func TestSymbologyData(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":50,"height":30,"objs":[
		{"type":"Code39","x":1,"y":1,"barHeight":5,"text":"AB-c"},
		{"type":"Code128","x":1,"y":1,"barHeight":5,"text":"caf\u00e9"},
		{"type":"Code128","x":1,"y":1,"barHeight":5,"text":"` + strings.Repeat("9", 81) + `"},
		{"type":"GS1-QRCode-Plain","x":1,"y":1,"text":"\u001d0109501101530003"},
		{"type":"GS1-QRCode","x":1,"y":1,"size":21,"eccLevel":"H","apps":[["01","09501101530003"],["10","ABCDEFGHIJ"]]},
		{"type":"DataMatrix","x":1,"y":1,"size":{"width":10,"height":10},"text":"ABCDEFGH"},
		{"type":"Code39","x":1,"y":1,"barHeight":5,"text":"{VARIABLE;x}"},
		{"type":"Code39","x":1,"y":1,"barHeight":5,"text":"ABC 0-9 $/+%."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`objs[0].text: character 'c' at byte 3 is not in Code 39 (0-9, A-Z, space and - . $ / + %)`,
		`objs[1].text: character 'é' at byte 3 is not ASCII, which Code 128 holds`,
		`objs[2].text: is 81 characters long; Code 128 holds at most 80`,
		`objs[3].text: starts with a GS (0x1D): a -Plain string starts with its first AI`,
		`objs[4]: the data does not fit a QR Code of size 21 at eccLevel H`,
		`objs[5]: the data takes 8 codewords, more than a Data Matrix of size 10x10 holds`,
	}
	if got := problemStrings(l); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

// TestSymbologyDataBounded: data far over a symbol's capacity is refused on its length, in
// time linear in it: a million digits in a Data Matrix (whose encoder's look-ahead is
// quadratic in a run of digits: about 10^12 steps) or a PDF417 or a QR Code.
func TestSymbologyDataBounded(t *testing.T) {
	digits := strings.Repeat("1", 1_000_000)
	for _, o := range []string{
		`{"type":"DataMatrix","x":1,"y":1,"text":"` + digits + `"}`,
		`{"type":"PDF417","x":1,"y":1,"barWidth":0.3,"text":"` + digits + `"}`,
		`{"type":"GS1-QRCode-Plain","x":1,"y":1,"text":"10` + digits + `"}`,
	} {
		l, err := Parse([]byte(`{"format":3,"width":50,"height":30,"objs":[` + o + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range l.Problems() {
			found = found || strings.Contains(p.Msg, "fit") || strings.Contains(p.Msg, "codewords")
		}
		if !found {
			t.Errorf("%.40s...: no capacity problem: %v", o, l.Problems())
		}
	}
}
