package label

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func warningStrings(l *Label, dpi float64) []string {
	var s []string
	for _, p := range l.Warnings(dpi) {
		s = append(s, p.Error())
	}
	return s
}

// TestWarningsSymbolTables: each rule of the symbol specification tables applied, for each
// application read from the AIs: a label that meets it has no warning, one that does not is
// warned about on the property, naming the table; the X-dimension is the one printed, in
// whole dots at the label's resolution.
func TestWarningsSymbolTables(t *testing.T) {
	const sscc = `["00","106141411234567897"]`
	for _, c := range []struct {
		name string
		head string // label properties before objs
		objs string
		dpi  float64
		want []string
	}{
		{"logistic GS1-128 in range", ``,
			`{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[` + sscc + `]}`, 0, nil},
		{"logistic GS1-128 too narrow", ``,
			`{"type":"GS1-128","barWidth":0.34,"barHeight":32,"apps":[` + sscc + `]}`, 0,
			[]string{"objs[0].barWidth: X-dimension 0.339 mm (4 dots at 300 dpi) is under 0.495 mm, the least GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label"}},
		{"logistic GS1-128 too wide", ``,
			`{"type":"GS1-128","barWidth":1.0,"barHeight":32,"apps":[` + sscc + `]}`, 0,
			[]string{"objs[0].barWidth: X-dimension 1.016 mm (12 dots at 300 dpi) is over 0.940 mm, the most GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label"}},
		{"logistic GS1-128 too low", ``,
			`{"type":"GS1-128","barWidth":0.508,"barHeight":25,"apps":[` + sscc + `]}`, 0,
			[]string{"objs[0].barHeight: bar height 24.977 mm is under 31.750 mm, the least GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label"}},
		{"every GS1-128 of a logistic label is judged as one", ``,
			`{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[` + sscc + `]},
			{"type":"ObjectGroup","children":[{"type":"GS1-128","barWidth":1.0,"barHeight":32,"apps":[["02","09501101530003"],["37","12"]]}]}`, 0,
			[]string{"objs[1].children[0].barWidth: X-dimension 1.016 mm (12 dots at 300 dpi) is over 0.940 mm, the most GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label"}},
		{"trade item GS1-128 at table 2's widest", ``,
			`{"type":"GS1-128","barWidth":1.0,"barHeight":32,"apps":[["01","09501101530003"]]}`, 0, nil},
		{"trade item GS1-128 too low", ``,
			`{"type":"GS1-128","barWidth":0.508,"barHeight":20,"apps":[["01","09501101530003"],["10","LOT1"]]}`, 0,
			[]string{"objs[0].barHeight: bar height 19.981 mm is under 31.750 mm, the least GS1 symbol specification table 2 allows for GS1-128 on a trade item in general distribution, AI (01) or (02)"}},
		{"the dots of the label's resolution", `"hdpi":72,"vdpi":72,`,
			`{"type":"GS1-128","barWidth":0.52,"barHeight":32,"apps":[["01","09501101530003"]]}`, 0,
			[]string{"objs[0].barWidth: X-dimension 0.353 mm (1 dot at 72 dpi) is under 0.495 mm, the least GS1 symbol specification table 2 allows for GS1-128 on a trade item in general distribution, AI (01) or (02)"}},
		{"no barWidth: 3 dots at the caller's resolution", ``,
			`{"type":"GS1-128","barHeight":32,"apps":[["01","09501101530003"]]}`, 150, nil},
		{"no barWidth: 3 dots at 300 dpi", ``,
			`{"type":"GS1-128","barHeight":32,"apps":[["01","09501101530003"]]}`, 0,
			[]string{"objs[0].barWidth: X-dimension 0.254 mm (no barWidth: 3 dots at 300 dpi) is under 0.495 mm, the least GS1 symbol specification table 2 allows for GS1-128 on a trade item in general distribution, AI (01) or (02)"}},
		{"ITF-14 in range", ``,
			`{"type":"ITF","text":"19501101530000","barWidth":0.508,"barHeight":32}`, 0, nil},
		{"ITF-14 too narrow", ``,
			`{"type":"ITF","text":"19501101530000","barWidth":0.3,"barHeight":32}`, 0,
			[]string{"objs[0].barWidth: X-dimension 0.339 mm (4 dots at 300 dpi) is under 0.495 mm, the least GS1 symbol specification table 2 allows for ITF-14 on a trade item in general distribution, AI (01) or (02)"}},
		{"an ITF that is not ITF-14 is not judged", ``,
			`{"type":"ITF","text":"1234","barWidth":0.1,"barHeight":3}`, 0, nil},
		{"EAN-13 in range, its height scaled to its X-dimension", ``,
			`{"type":"EAN-13","text":"950110153000","barWidth":0.33,"barHeight":23.5}`, 0, nil},
		{"EAN-13 too low for its X-dimension", ``,
			`{"type":"EAN-13","text":"950110153000","barWidth":0.33,"barHeight":20}`, 0,
			[]string{"objs[0].barHeight: bar height 19.981 mm is under 23.450 mm, the least GS1 symbol specification table 1 allows for EAN-13 and UPC-A on a trade item scanned at the point of sale at an X-dimension of 0.339 mm"}},
		{"UPC-A too narrow", ``,
			`{"type":"UPC-A","text":"01234567890","barWidth":0.2,"barHeight":23}`, 0,
			[]string{"objs[0].barWidth: X-dimension 0.169 mm (2 dots at 300 dpi) is under 0.264 mm, the least GS1 symbol specification table 1 allows for EAN-13 and UPC-A on a trade item scanned at the point of sale"}},
		{"GS1 DataMatrix of a trade item, no moduleSize", ``,
			`{"type":"GS1-DataMatrix","apps":[["01","09501101530003"],["10","LOT1"]]}`, 0, nil},
		{"GS1 DataMatrix of a trade item, 5 dots at 600 dpi", ``,
			`{"type":"GS1-DataMatrix","apps":[["01","09501101530003"],["10","LOT1"]]}`, 600,
			[]string{"objs[0].moduleSize: X-dimension 0.212 mm (no moduleSize: 5 dots at 600 dpi) is under 0.375 mm, the least GS1 symbol specification tables 1 and 2 allow for GS1 DataMatrix on a trade item, AI (01)"}},
		{"GS1 QR Code -Plain of a trade item too large", ``,
			`{"type":"GS1-QRCode-Plain","text":"0109501101530003","moduleSize":2}`, 0,
			[]string{"objs[0].moduleSize: X-dimension 2.032 mm (24 dots at 300 dpi) is over 1.500 mm, the most GS1 symbol specification tables 1 and 2 allow for GS1 QR Code on a trade item, AI (01)"}},
		{"healthcare GS1 DataMatrix in range", ``,
			`{"type":"GS1-DataMatrix","moduleSize":0.3,"apps":[["01","09501101530003"],["710","12345"]]}`, 0, nil},
		{"healthcare GS1 DataMatrix too small", ``,
			`{"type":"GS1-DataMatrix","moduleSize":0.2,"apps":[["01","09501101530003"],["710","12345"]]}`, 0,
			[]string{"objs[0].moduleSize: X-dimension 0.169 mm (2 dots at 300 dpi) is under 0.254 mm, the least GS1 symbol specification tables 6, 8 and 10 allow for GS1 DataMatrix on a regulated healthcare item, AI (01) with a national healthcare reimbursement number (710 to 716)"}},
		{"healthcare GS1 QR Code: table 8 alone has it", ``,
			`{"type":"GS1-QRCode","moduleSize":0.5,"apps":[["01","09501101530003"],["710","12345"]]}`, 0,
			[]string{"objs[0].moduleSize: X-dimension 0.508 mm (6 dots at 300 dpi) is under 0.750 mm, the least GS1 symbol specification table 8 allows for GS1 QR Code on a regulated healthcare item, AI (01) with a national healthcare reimbursement number (710 to 716)"}},
		{"GIAI GS1-128 in range", ``,
			`{"type":"GS1-128","barWidth":0.25,"barHeight":13,"apps":[["8004","95011015ABC"]]}`, 0, nil},
		{"GIAI GS1-128 too low", ``,
			`{"type":"GS1-128","barWidth":0.25,"barHeight":10,"apps":[["8004","95011015ABC"]]}`, 0,
			[]string{"objs[0].barHeight: bar height 9.991 mm is under 12.700 mm, the least GS1 symbol specification table 9 allows for GS1-128 on a GDTI, GRAI, GIAI or GLN, AI (253), (8003), (8004) or (414)"}},
		{"a huge barWidth is as wide as the preview draws it", ``,
			`{"type":"GS1-128","barWidth":1e300,"barHeight":32,"apps":[["01","09501101530003"]]}`, 0,
			[]string{"objs[0].barWidth: X-dimension 90910141.099 mm (1073741824 dots at 300 dpi) is over 1.016 mm, the most GS1 symbol specification table 2 allows for GS1-128 on a trade item in general distribution, AI (01) or (02)"}},
		{"no application: no table", ``,
			`{"type":"GS1-128","barWidth":0.1,"barHeight":3,"apps":[["400","PO1"]]}`, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse([]byte(`{"format":3,` + c.head + `"width":150,"height":150,"objs":[` + c.objs + `]}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := warningStrings(l, c.dpi); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got:\n%q\nwant:\n%q", got, c.want)
			}
			if err := l.Validate(); err != nil {
				t.Errorf("a warning is not a problem of Validate: %v", err)
			}
		})
	}
}

// TestWarningsGS1128Length: a GS1-128 holds at most 48 data characters, counted with its AIs
// and the FNC1 separators after variable-length values; data of dynamic text is judged once
// filled.
func TestWarningsGS1128Length(t *testing.T) {
	long := `{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[["01","09501101530003"],["10","ABCDEFGHIJKLMNOPQ"],["21","{VARIABLE;Serial}"]]}`
	l, err := Parse([]byte(`{"format":3,"width":150,"height":50,"objs":[` +
		`{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[["01","09501101530003"],["10","ABCDEFGHIJKLMNOPQ"],["21","ABCDEFGHIJ"]]},` +
		`{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[["01","09501101530003"],["10","ABCDEFGHIJKLMNOPQR"],["21","ABCDEFGHIJ"]]},` +
		long + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	// (01) 16, (10) 19, an FNC1 after the lot, (21) 12: 48 in the first, 49 in the second.
	want := []string{"objs[1].apps: GS1-128 data of 49 characters (AIs, values and FNC1 separators) is over the 48 the GS1 General Specifications allow in one symbol; split it over two"}
	if got := warningStrings(l, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	filled, err := l.Fill(&Env{Clock: func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) },
		Variables: map[string]string{"Serial": "ABCDEFGHIJKLM"}})
	if err != nil {
		t.Fatal(err)
	}
	got := warningStrings(filled, 0)
	if len(got) != 2 || !strings.HasPrefix(got[1], "objs[2].apps: GS1-128 data of 51 characters") {
		t.Errorf("filled: %q", got)
	}
}

// TestLintWarnings: the GS1 symbol rules judged at every shape the dynamic text can take, as
// Lint judges problems: a counter at its largest value makes this GS1-128 too long, which the
// label as written and at the least value do not show.
func TestLintWarnings(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":150,"height":50,"objs":[` +
		`{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[["01","09501101530003"],["10","ABCDEFGHIJKLMNOPQRS"],["21","{COUNTER;Serial}"]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ws := l.Warnings(0); len(ws) != 0 {
		t.Errorf("as written: %v", ws)
	}
	var got []string
	for _, p := range l.LintWarnings(&Env{Clock: func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }}, 0) {
		got = append(got, p.Error())
	}
	want := []string{"objs[0].apps: GS1-128 data of 49 characters (AIs, values and FNC1 separators) is over the 48 the GS1 General Specifications allow in one symbol; split it over two (counters at their largest value)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}
