package label

import (
	"reflect"
	"testing"
	"time"
)

// TestValidateGS1: apps and -Plain strings are checked against the GS1 dictionary, each
// problem by the path of the entry (or text) and naming the AI; a rule between AIs is named
// on the entry of the AI that has it.
func TestValidateGS1(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":100,"height":50,"objs":[
		{"type":"GS1-128","barHeight":10,"apps":[{"id":"00","value":"106141411234567897"},["02","09501101530003"]]},
		{"type":"GS1-DataMatrix","apps":[["01","09501101530004"],["17","261331"],["89","X"],["10","AB 12"]]},
		{"type":"GS1-QRCode","apps":[["01","09501101530003"],["02","09501101530003"],["37","10"],["00","106141411234567897"]]},
		{"type":"GS1-DataMatrix-Plain","text":"0109501101530003\u001d17261232"},
		{"type":"GS1-QRCode-Plain","text":"0109501101530003891"},
		{"type":"GS1-QRCode-Plain","text":"0109501101530003"},
		{"type":"ObjectGroup","children":[{"type":"GS1-128","barHeight":1,"apps":[["10","LOT1"]]}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := problemStrings(l)
	// The rules between AIs are the label's, over all its GS1 symbols, each after its
	// object's other problems: (02) on objs[0] has its (37) on objs[2]; the first (01) and
	// (02) exclude each other's symbols'.
	want := []string{
		"objs[0].apps[1]: AI (02) must not appear with AI (01) (objs[1].apps[0])",
		`objs[1].apps[0].value: AI (01): check digit is 4, must be 3 (position 14 of "09501101530004")`,
		`objs[1].apps[1].value: AI (17): month 13 does not exist (in "261331")`,
		"objs[1].apps[2].id: AI (89) is not in the GS1 Barcode Syntax Dictionary",
		`objs[1].apps[3].value: AI (10): character ' ' is not in GS1 character set 82 (position 3 of "AB 12")`,
		"objs[1].apps[0]: AI (01) must not appear with AI (37) (objs[2].apps[2])",
		`objs[3].text: element 1: AI (17): day 32 does not exist in 2026-12 (in "261232")`,
		`objs[4].text: GS1 element string: at byte 16: no AI of the GS1 dictionary starts "891"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// TestValidateGS1Dynamic: a value holding dynamic text is checked once filled, and so are
// the rules between entries; the other entries are checked at once.
func TestValidateGS1Dynamic(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":100,"height":50,"objs":[
		{"type":"GS1-128","barHeight":10,"apps":[["01","09501101530004"],["10","{VARIABLE;Lot}"],["17","{VARIABLE;Expiry}"]]},
		{"type":"GS1-QRCode-Plain","text":"0109501101530003\u001d10{VARIABLE;Lot}"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := problemStrings(l)
	want := []string{`objs[0].apps[0].value: AI (01): check digit is 4, must be 3 (position 14 of "09501101530004")`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("before Fill:\n%q\nwant:\n%q", got, want)
	}
	filled, err := l.Fill(&Env{
		Clock:     func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		Variables: map[string]string{"Lot": "AB 12", "Expiry": "261331"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got = problemStrings(filled)
	want = []string{
		`objs[0].apps[0].value: AI (01): check digit is 4, must be 3 (position 14 of "09501101530004")`,
		`objs[0].apps[1].value: AI (10): character ' ' is not in GS1 character set 82 (position 3 of "AB 12")`,
		`objs[0].apps[2].value: AI (17): month 13 does not exist (in "261331")`,
		`objs[1].text: element 1: AI (10): character ' ' is not in GS1 character set 82 (position 3 of "AB 12")`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after Fill:\n%q\nwant:\n%q", got, want)
	}
}

// TestValidateGS1RulesAcrossSymbols: the req and ex rules of the GS1 dictionary hold over all
// the GS1 symbols of a label, apps and -Plain strings, in groups too, as GS1 evaluates them
// over the data carriers of an item: a rule met by another symbol is no problem, one that no
// symbol meets, or an exclusion between two symbols, is, on the entry with the rule, naming
// the other symbol's entry.
func TestValidateGS1RulesAcrossSymbols(t *testing.T) {
	for _, c := range []struct {
		name string
		objs string
		want []string
	}{
		{"needs met by another GS1-128", `
			{"type":"GS1-128","barHeight":32,"apps":[["00","106141411234567897"]]},
			{"type":"GS1-128","barHeight":32,"apps":[["02","09501101530003"],["10","LOT1"]]},
			{"type":"GS1-128","barHeight":32,"apps":[["37","12"]]}`, nil},
		{"needs met by a -Plain string in a group", `
			{"type":"GS1-128","barHeight":32,"apps":[["00","106141411234567897"],["02","09501101530003"]]},
			{"type":"ObjectGroup","children":[{"type":"GS1-DataMatrix-Plain","text":"3712"}]}`, nil},
		{"a lone symbol's single AI needs another", `
			{"type":"GS1-128","barHeight":32,"apps":[["10","LOT1"]]}`,
			[]string{"objs[0].apps[0]: AI (10) needs AI (01), (02), (03), (8006) or (8026)"}},
		{"needs met by no symbol", `
			{"type":"GS1-128","barHeight":32,"apps":[["00","106141411234567897"]]},
			{"type":"GS1-128","barHeight":32,"apps":[["02","09501101530003"]]}`,
			[]string{"objs[1].apps[0]: AI (02) needs AI (37)"}},
		{"exclusion between symbols", `
			{"type":"GS1-DataMatrix","apps":[["01","09501101530003"],["10","LOT1"]]},
			{"type":"ObjectGroup","children":[{"type":"GS1-128","barHeight":32,"apps":[["00","106141411234567897"],["02","09501101530003"],["37","5"]]}]}`,
			[]string{
				"objs[0].apps[0]: AI (01) must not appear with AI (37) (objs[1].children[0].apps[2])",
				"objs[1].children[0].apps[1]: AI (02) must not appear with AI (01) (objs[0].apps[0])",
			}},
		{"exclusion with a -Plain string", `
			{"type":"GS1-QRCode-Plain","text":"0109501101530003"},
			{"type":"GS1-128","barHeight":32,"apps":[["00","106141411234567897"],["02","09501101530003"],["37","5"]]}`,
			[]string{
				"objs[0].text: element 0: AI (01) must not appear with AI (37) (objs[1].apps[2])",
				"objs[1].apps[1]: AI (02) must not appear with AI (01) (objs[0].text element 0)",
			}},
		{"an EAN-13 carries AI (01)", `
			{"type":"EAN-13","barHeight":23,"text":"950110153000"},
			{"type":"GS1-128","barHeight":32,"apps":[["10","{VARIABLE;Lot}"]]}`, nil},
		{"an ITF-14 carries AI (01), which excludes (02)", `
			{"type":"ITF","barHeight":32,"text":"19501101530000"},
			{"type":"GS1-128","barHeight":32,"apps":[["02","09501101530003"],["37","5"]]}`,
			[]string{
				"objs[0].text: AI (01) must not appear with AI (37) (objs[1].apps[1])",
				"objs[1].apps[0]: AI (02) must not appear with AI (01) (objs[0].text)",
				"objs[1].apps[1]: AI (37) needs AI (00)",
			}},
		{"an AI of dynamic text: checked once filled", `
			{"type":"GS1-128","barHeight":32,"apps":[["02","09501101530003"]]},
			{"type":"GS1-128","barHeight":32,"apps":[["{VARIABLE;AI}","12"]]}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse([]byte(`{"format":3,"width":100,"height":150,"objs":[` + c.objs + `]}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := problemStrings(l); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got:\n%q\nwant:\n%q", got, c.want)
			}
		})
	}
}
