package label

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func clockAt(s string) func() time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return func() time.Time { return t }
}

// TestExpandDocumented: the pages' examples, with their slips corrected: 2024-10-04 + 20 weeks is
// 2025-02-21 (the intro says 2024-02-21), and the offset is TIME's second parameter.
func TestExpandDocumented(t *testing.T) {
	env := &Env{
		Clock:      clockAt("2024-10-04T10:30:00Z"),
		Variables:  map[string]string{"MyVariable": "Line 3", "WEEK_OFFSET": "2"},
		Counters:   map[string]int64{"SerialNum": 42, "Big": 255, "Year": 2021},
		ShiftCodes: map[string][]Shift{"MyShift": {{Start: 6 * time.Hour, Code: "A"}, {Start: 14 * time.Hour, Code: "B"}, {Start: 22 * time.Hour, Code: "C"}}},
	}
	for in, want := range map[string]string{
		"{YEAR}":                "2024",
		"{VARIABLE;MyVariable}": "Line 3",
		"Best before {TIME;{YEAR}-{MONTH}-{DAYOFMONTH};+20weeks}":         "Best before 2025-02-21",
		"{TIME;{YEAR}-{MONTH}-{DAYOFMONTH};+{VARIABLE;WEEK_OFFSET}weeks}": "2024-10-18",
		"{COUNTER;SerialNum}":                                       "42",
		"{COUNTER;SerialNum;WIDTH=6}":                               "000042",
		"{COUNTER;SerialNum;WIDTH=6;PADDING= }":                     "    42",
		"{COUNTER;SerialNum;WIDTH=4;PADDING=*}":                     "**42",
		"{COUNTER;SerialNum;FORMAT=alpha}":                          "AP",
		"{COUNTER;Big;FORMAT=#0123456789ABCDEF}":                    "FF",
		"{COUNTER;Big;FORMAT=#01;WIDTH=10}":                         "0011111111",
		"{MONTH;FORMAT=shortmonth}":                                 "OCT",
		"{DAYOFMONTH;FORMAT=shortweekday}":                          "THU", // 4 = THU
		"{MONTH;FORMAT={A;B;C;D;E;F;G;H;I;J;K;L}}":                  "J",
		"{COUNTER;Year;FORMAT={#2020;A;B;C}}":                       "B",
		"{SHIFTCODE;MyShift}":                                       "A",
		"{DAYOFYEAR}":                                               "278",
		"{TIME;{DAYOFYEAR};-277days}":                               "001",
		"{TIME;{SHIFTCODE;MyShift};+12hours}":                       "C",
		"{TIME;{SHIFTCODE;MyShift};-5hours}":                        "C", // 05:30: the night shift of the day before
		"{TIME;{YEAR};+1year-2months+3weeks-4days+5hours-6minutes}": "2025",
		"no codes at all":                                           "no codes at all",
	} {
		got, err := Expand(in, env)
		if err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestExpandOffsets: months and years keep the day or take the month's last; weeks and days
// cross month and year ends and leap days.
func TestExpandOffsets(t *testing.T) {
	for _, c := range []struct{ now, off, want string }{
		{"2024-01-31T12:00:00Z", "+1month", "2024-02-29"},
		{"2023-01-31T12:00:00Z", "+1month", "2023-02-28"},
		{"2024-02-29T12:00:00Z", "+1year", "2025-02-28"},
		{"2024-02-29T12:00:00Z", "+4years", "2028-02-29"},
		{"2024-03-31T12:00:00Z", "-1month", "2024-02-29"},
		{"2024-12-31T12:00:00Z", "+1day", "2025-01-01"},
		{"2024-02-28T12:00:00Z", "+1day", "2024-02-29"},
		{"2023-02-28T12:00:00Z", "+1day", "2023-03-01"},
		{"2024-01-01T00:30:00Z", "-1hour", "2023-12-31"},
		{"2024-12-15T12:00:00Z", "+3weeks", "2025-01-05"},
		{"2024-11-30T12:00:00Z", "+3months", "2025-02-28"},
		{"2025-01-15T12:00:00Z", "-13months", "2023-12-15"},
		{"2024-02-28T23:59:00Z", "+1minute", "2024-02-29"},
		{"2024-10-04T10:00:00Z", "+20weeks", "2025-02-21"},
	} {
		got, err := Expand("{TIME;{YEAR}-{MONTH}-{DAYOFMONTH};"+c.off+"}", &Env{Clock: clockAt(c.now)})
		if err != nil || got != c.want {
			t.Errorf("%s %s = %q, %v; want %s", c.now, c.off, got, err, c.want)
		}
	}
}

// TestExpandNesting: codes nest in TIME's text, its offset, and a code's name parameter.
func TestExpandNesting(t *testing.T) {
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z"), Variables: map[string]string{"which": "Lot", "Lot": "L7", "n": "1"},
		Counters: map[string]int64{"Lot": 9}}
	for in, want := range map[string]string{
		"{VARIABLE;{VARIABLE;which}}":                      "L7",
		"{COUNTER;{VARIABLE;which};WIDTH={VARIABLE;n}0}":   "0000000009",
		"{TIME;{TIME;{MONTH};+1month};+{VARIABLE;n}month}": "12",
		"[{YEAR}{MONTH}] {TIME;<{DAYOFMONTH}>;+1day} end":  "[202410] <05> end",
	} {
		got, err := Expand(in, env)
		if err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestExpandNestingDepth: codes fill 64 levels deep; one level more is left as written and
// reported, so that a hostile text of thousands of levels (each level scanning the rest of the
// text) fills in linear time.
func TestExpandNestingDepth(t *testing.T) {
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z")}
	nest := func(n int) string {
		return strings.Repeat("{TIME;", n) + "{DAYOFMONTH}" + strings.Repeat(";+1day}", n)
	}
	if got, err := Expand(nest(63), env); err != nil || got != "06" { // 4 October + 63 days
		t.Errorf("63 TIME levels around DAYOFMONTH: %q, %v; want \"06\"", got, err)
	}
	got, err := Expand(nest(64), env)
	var ce *CodeError
	if !errors.As(err, &ce) || ce.Code != "{DAYOFMONTH}" || !strings.Contains(ce.Msg, "nest deeper than 64") {
		t.Errorf("65 levels: %q, %v; want {DAYOFMONTH} reported as nested too deep", got, err)
	}
	if got != "{DAYOFMONTH}" {
		t.Errorf("65 levels: %q; want the innermost code as written", got)
	}
	if _, err := Expand(nest(20000), env); err == nil {
		t.Error("20000 levels: no error")
	}
}

// TestExpandUnknown: what cannot be filled is left as written and reported, the rest filled.
func TestExpandUnknown(t *testing.T) {
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z"), Counters: map[string]int64{"C": 0}}
	for _, c := range []struct{ in, want, code string }{
		{"{FOO} {YEAR}", "{FOO} 2024", "{FOO}"},
		{"{HOUR;x}", "{HOUR;x}", "{HOUR;x}"},
		{"{VARIABLE;Missing}-{YEAR}", "{VARIABLE;Missing}-2024", "{VARIABLE;Missing}"},
		{"{COUNTER;C;FORMAT=alpha}", "{COUNTER;C;FORMAT=alpha}", "{COUNTER;C;FORMAT=alpha}"},
		{"{COUNTER;C;WIDTH=x}", "{COUNTER;C;WIDTH=x}", "{COUNTER;C;WIDTH=x}"},
		{"{TIME;{YEAR};+2fortnights}", "{TIME;{YEAR};+2fortnights}", "{TIME;{YEAR};+2fortnights}"},
		{"{TIME;{YEAR};+{VARIABLE;X}days}", "{TIME;{YEAR};+{VARIABLE;X}days}", "{VARIABLE;X}"},
		{"a {YEAR", "a {YEAR", "{YEAR"},
		{"a } {YEAR}", "a } 2024", "}"},
		{"{{SKU}}", "{{SKU}}", "{{SKU}}"},
		{"{SHIFTCODE;None}", "{SHIFTCODE;None}", "{SHIFTCODE;None}"},
	} {
		got, err := Expand(c.in, env)
		var ce *CodeError
		if got != c.want || !errors.As(err, &ce) || ce.Code != c.code {
			t.Errorf("Expand(%q) = %q, %v; want %q reporting %s", c.in, got, err, c.want, c.code)
		}
	}
}

// TestExpandTableRow: {{Column}}, this package's and printersim's convention, takes the row.
func TestExpandTableRow(t *testing.T) {
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z"), Row: map[string]string{"SKU": "A-1", "Name": "Bolt {x}"}}
	got, err := Expand("{{SKU}}: {{Name}} {YEAR}", env)
	if err != nil || got != "A-1: Bolt {x} 2024" {
		t.Errorf("got %q, %v", got, err)
	}
	got, err = Expand("{{Nope}}", env)
	if got != "{{Nope}}" || err == nil {
		t.Errorf("missing column: %q, %v", got, err)
	}
}

// BenchmarkExpand fills a typical text: a best-before date, a lot counter and a variable.
func BenchmarkExpand(b *testing.B) {
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z"), Counters: map[string]int64{"Lot": 42}, Variables: map[string]string{"Line": "3"}}
	text := "BEST BEFORE {TIME;{DAYOFMONTH}.{MONTH}.{YEAR};+20weeks} LOT {COUNTER;Lot;WIDTH=6} L{VARIABLE;Line}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(text, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandStringsReplacer is what a user would write instead for fixed codes: a
// strings.Replacer built per label (no nesting, no offsets).
func BenchmarkExpandStringsReplacer(b *testing.B) {
	now := clockAt("2024-10-04T10:30:00Z")()
	text := "BEST BEFORE {DAYOFMONTH}.{MONTH}.{YEAR} LOT {LOT} L{LINE}"
	b.ReportAllocs()
	for b.Loop() {
		t := now.AddDate(0, 0, 140)
		r := strings.NewReplacer("{DAYOFMONTH}", t.Format("02"), "{MONTH}", t.Format("01"), "{YEAR}", t.Format("2006"), "{LOT}", "000042", "{LINE}", "3")
		_ = r.Replace(text)
	}
}

// TestFill: Fill fills every dynamic property of a copy at one moment, names what it could
// not fill, and leaves the label as it was; the filled copy's check digits are checked.
func TestFill(t *testing.T) {
	l, err := Parse([]byte(`{"format":3,"width":50,"height":30,"bgColor":"{VARIABLE;Bg}","objs":[
		{"type":"ObjectGroup","children":[{"type":"EAN-13","text":"{VARIABLE;Gtin}","barHeight":10,"zz":"{YEAR}"}]},
		{"type":"GS1-128","barHeight":10,"apps":[{"id":"10","value":"L{DAYOFYEAR}"},{"id":"21","value":"{COUNTER;Nope}"}]},
		{"type":"Ellipse","text":"{YEAR}"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z"), Variables: map[string]string{"Bg": "white", "Gtin": "9501101530004"}}
	c, err := l.Fill(env)
	var got []string
	for _, p := range ProblemsOf(err) {
		got = append(got, p.Error())
	}
	if len(got) != 1 || got[0] != "objs[1].apps[1].value: {COUNTER;Nope} at byte 0: no counter Nope" {
		t.Errorf("problems %q", got)
	}
	if *c.BgColor != "white" || c.Objs[1].(*GS1128).Apps[0].Value != "L278" {
		t.Errorf("filled %s, %s", *c.BgColor, c.Objs[1].(*GS1128).Apps[0].Value)
	}
	out, _ := json.Marshal(c)
	if !strings.Contains(string(out), `"zz":"{YEAR}"`) || !strings.Contains(string(out), `{"type":"Ellipse","text":"{YEAR}"}`) {
		t.Errorf("unknown content was filled: %s", out)
	}
	if *l.BgColor != "{VARIABLE;Bg}" {
		t.Error("Fill changed the label")
	}
	if l.Validate() != nil {
		t.Errorf("the dynamic label: %v", l.Validate())
	}
	if ps := ProblemsOf(c.Validate()); len(ps) != 1 || ps[0].Error() != "objs[0].children[0].text: check digit is 4, must be 3" {
		t.Errorf("the filled label: %v", ps)
	}
}

// TestExpandNegativeCounter: a negative counter padded with a digit keeps its sign first (-005,
// not 00-5); padded with another character the sign stays beside the digits.
func TestExpandNegativeCounter(t *testing.T) {
	env := &Env{Counters: map[string]int64{"N": -5, "P": 5, "Min": -9223372036854775808}}
	for in, want := range map[string]string{
		"{COUNTER;N;WIDTH=4}":            "-005",
		"{COUNTER;N;WIDTH=2}":            "-5",
		"{COUNTER;N;WIDTH=1}":            "-5",
		"{COUNTER;N}":                    "-5",
		"{COUNTER;N;WIDTH=4;PADDING= }":  "  -5",
		"{COUNTER;N;WIDTH=4;PADDING=9}":  "-995",
		"{COUNTER;P;WIDTH=4}":            "0005",
		"{COUNTER;Min;WIDTH=21}":         "-09223372036854775808",
		"{COUNTER;N;FORMAT={#-5;A;B;C}}": "A",
	} {
		got, err := Expand(in, env)
		if err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestExpandLongHourOffsets: hours and minutes summing past what a time.Duration holds (about
// 292 years) move the clock that far, where they wrapped around to a date before the clock.
func TestExpandLongHourOffsets(t *testing.T) {
	now := time.Date(2024, 10, 4, 10, 30, 0, 0, time.UTC)
	env := &Env{Clock: func() time.Time { return now }}
	// 999999 hours is about 114 years: three of them are 342 years, four 456.
	for _, c := range []struct {
		off  string
		want time.Time
	}{
		{"+999999hours", now.Add(999999 * time.Hour)},
		{"+999999hours+999999hours+999999hours", now.AddDate(0, 0, 3*999999/24).Add(3 * 999999 % 24 * time.Hour)},
		{"-999999hours-999999hours-999999hours-999999hours", now.AddDate(0, 0, -4*999999/24).Add(-(4 * 999999 % 24) * time.Hour)},
		{"+999999minutes+999999hours+999999hours+999999hours-999999hours-999999hours-999999hours", now.Add(999999 * time.Minute)},
	} {
		got, err := Expand("{TIME;{YEAR}-{MONTH}-{DAYOFMONTH} {DAYOFYEAR};"+c.off+"}", env)
		want := c.want.Format("2006-01-02 ") + fmt.Sprintf("%03d", c.want.YearDay())
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", c.off, got, err, want)
		}
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestExpandBounded: a hostile text fills with work bounded by its length: 64 nested codes
// around a body are not copied at each level and are reported once, with the message quoting
// at most 64 bytes of it; codes past 32 are counted, not listed; a value that would take the
// text past 16 times its length plus 4 KiB is left as written.
func TestExpandBounded(t *testing.T) {
	env := &Env{Clock: clockAt("2024-10-04T10:30:00Z"), Variables: map[string]string{"A": strings.Repeat("a", 1<<20)}}
	body := strings.Repeat("x", 1<<20)
	nested := strings.Repeat("{VARIABLE;", 64) + body + strings.Repeat("}", 64)
	var got string
	var err error
	if a := allocated(func() { got, err = Expand(nested, env) }); a > 8*uint64(len(nested)) {
		t.Errorf("64 nested codes around %d bytes: %d bytes allocated, want at most 8 per byte", len(body), a)
	}
	if got != nested {
		t.Error("64 nested codes that cannot be filled: not left as written")
	}
	if ps := codeErrors(err); len(ps) != 1 || len(ps[0].Error()) > 200 || !strings.HasPrefix(ps[0].Error(), "{VARIABLE;xxx") {
		t.Errorf("64 nested codes: %d errors, the first %.300q; want one, short", len(ps), err)
	}

	many := strings.Repeat("{X}", 100000)
	got, err = Expand(many, env)
	ps := codeErrors(err)
	if got != many || len(ps) != 32 || !strings.Contains(ps[31].Msg, "99968 more codes could not be filled") {
		t.Errorf("100000 unknown codes: %d errors listed, the last %v", len(ps), ps[len(ps)-1])
	}

	got, err = Expand("{VARIABLE;A}", env)
	if got != "{VARIABLE;A}" || err == nil || !strings.Contains(err.Error(), "longer than 4288 bytes") {
		t.Errorf("a 1 MiB variable in a 12-byte text: %.40q, %v", got, err)
	}
	env.Variables["B"] = strings.Repeat("b", 64<<10)
	text := strings.Repeat("{VARIABLE;B}", 1024) // 12 KiB: the limit is 196 KiB + 4 KiB
	got, err = Expand(text, env)
	if n := strings.Count(got, "b"); n != 3*64<<10 || err == nil || len(got) > 17*len(text)+4096 {
		t.Errorf("a 64 KiB variable 1024 times in 12 KiB: %d bytes, %d filled, %.80v; want 3 filled", len(got), n/(64<<10), err)
	}
}
