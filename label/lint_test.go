package label

import (
	"reflect"
	"strings"
	"testing"
)

func lintStrings(t *testing.T, src string, env *Env) []string {
	t.Helper()
	l, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, p := range l.Lint(env) {
		s = append(s, p.Error())
	}
	return s
}

// TestLintFilled: Lint checks the label filled as it will print, where Problems skips a value
// holding dynamic text: {YEAR} inside AI (17) at every date, a date that exists only some
// years, a counter past its AI's length at its largest value, a GTIN with a wrong check digit
// in the table row, an unknown code; codes whose value no printer is known for (variables, a
// column without a row) are left unfilled and are no problem.
func TestLintFilled(t *testing.T) {
	const src = `{"format":3,"width":50,"height":30,"objs":[
		{"type":"GS1-128","x":1,"y":1,"barHeight":10,"apps":[["01","09501101530003"],["17","{YEAR}0704"]]},
		{"type":"GS1-128","x":1,"y":1,"barHeight":10,"apps":[["01","09501101530003"],["17","27{MONTH}{DAYOFMONTH}"]]},
		{"type":"GS1-128","x":1,"y":1,"barHeight":10,"apps":[["01","09501101530003"],["30","{COUNTER;Boxes}"],["21","{COUNTER;Serial;WIDTH=6}"]]},
		{"type":"EAN-13","x":1,"y":1,"barHeight":10,"text":"{{Gtin}}"},
		{"type":"Text","x":1,"y":1,"text":"{YEER} {VARIABLE;Line} {SHIFTCODE;S}","color":"black","font":{"family":"Arial","style":"Bold","height":3}},
		{"type":"GS1-128","x":1,"y":1,"barHeight":10,"apps":[["01","{VARIABLE;Gtin}"],["10","{{Lot}}"]]}]}`
	// Written, nothing here is a problem: every value that could be one holds dynamic text.
	l, _ := Parse([]byte(src))
	if ps := l.Problems(); len(ps) != 0 {
		t.Fatalf("as written: %v", ps)
	}
	env := &Env{Clock: clockAt("2026-11-27T10:00:00Z"), Row: map[string]string{"Gtin": "9501101530004"}}
	got := lintStrings(t, src, env)
	want := []string{
		`objs[4].text: {YEER} at byte 0: unknown code`,
		`objs[5].apps[1].value: {{Lot}} at byte 0: the row has no column Lot`,
		`objs[0].apps[1].value: AI (17): value "20260704" has 8 characters, must have 6`,
		`objs[3].text: check digit is 4, must be 3`,
		`objs[2].apps[1].value: AI (30): value "999999999" has 9 characters, must have 1 to 8 (counters at their largest value)`,
		`objs[1].apps[1].value: AI (17): day 29 does not exist in 2027-02 (in "270229") (filled on 2028-02-29)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Lint:\n got %q\nwant %q", got, want)
	}
	// The same label with the row's GTIN right has no GTIN problem, nor one of its lot.
	env.Row = map[string]string{"Gtin": "9501101530003", "Lot": "L1"}
	for _, p := range lintStrings(t, src, env) {
		if strings.HasPrefix(p, "objs[3]") || strings.HasPrefix(p, "objs[5]") {
			t.Errorf("with the right GTIN and a lot: %s", p)
		}
	}
	// Without a row, {{Lot}} is left unfilled and is no problem.
	env.Row = nil
	for _, p := range lintStrings(t, src, env) {
		if strings.HasPrefix(p, "objs[3]") || strings.HasPrefix(p, "objs[5]") {
			t.Errorf("with the right GTIN: %s", p)
		}
	}
	// A row that lacks a column the label names is a problem: the row was given.
	got = lintStrings(t, `{"format":3,"width":5,"height":5,"objs":[{"type":"EAN-13","x":1,"y":1,"barHeight":1,"text":"{{Gtin}}"}]}`, &Env{Row: map[string]string{}})
	if len(got) != 1 || got[0] != "objs[0].text: {{Gtin}} at byte 0: the row has no column Gtin" {
		t.Errorf("a row without the column: %q", got)
	}
}

// TestLintCounterShapes: counters are filled at the least and the largest value of their
// format and width.
func TestLintCounterShapes(t *testing.T) {
	for _, c := range []struct {
		code          string
		least, larges string
	}{
		{"{COUNTER;n}", "0", "999999999"},
		{"{COUNTER;n;WIDTH=4}", "0000", "9999"},
		{"{COUNTER;n;FORMAT=#01;WIDTH=3}", "000", "111"},
		{"{COUNTER;n;FORMAT=alpha;WIDTH=2}", " A", "ZZ"},
		{"{COUNTER;n;FORMAT=alpha}", "A", "Z"},
		{"{COUNTER;n;FORMAT=shortmonth}", "JAN", "DEC"},
		{"{COUNTER;n;FORMAT=shortweekday}", "MON", "SUN"},
		{"{COUNTER;n;FORMAT={#2020;A;B;C}}", "A", "C"},
	} {
		for shape, want := range map[counterShape]string{countersLeast: c.least, countersLargest: c.larges} {
			got, err := Expand(strings.Replace(c.code, "WIDTH=2}", "WIDTH=2;PADDING= }", 1), &Env{counters: shape})
			if err != nil || got != want {
				t.Errorf("%s at shape %d = %q, %v; want %q", c.code, shape, got, err, want)
			}
		}
	}
}
