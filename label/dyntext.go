package label

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Env is what dynamic text is filled from. A nil map holds nothing; a nil Clock is time.Now.
type Env struct {
	// Clock returns the moment the text is filled at, read once per Expand; its location is
	// the printer's time zone.
	Clock func() time.Time
	// Variables are the values of {VARIABLE;Name}.
	Variables map[string]string
	// Counters are the current values of {COUNTER;Name}.
	Counters map[string]int64
	// ShiftCodes are the shift definitions of {SHIFTCODE;Name}.
	ShiftCodes map[string][]Shift
	// Row is a table row, column name to cell, for {{Column}} (see [Expand]).
	Row map[string]string

	// counters, when set, fills every {COUNTER} at the least or the largest value its format
	// and width take, whatever Counters holds (lint.go).
	counters counterShape
}

// Shift is one shift of a shift-code definition: from Start (time since midnight) until the
// next shift's Start, {SHIFTCODE;Name} is Code. The shifts of a definition are in order of
// Start; before the first Start, the last shift (of the day before) runs.
type Shift struct {
	Start time.Duration
	Code  string
}

// CodeError is a dynamic-text code Expand could not fill; the code is left as written.
type CodeError struct {
	// Code is the code as written, braces included: "{VARIABLE;Batch}".
	Code string
	// Offset is the code's byte offset in the text Expand was given (in a nested code's own
	// text when it is nested).
	Offset int
	// Msg says why: "unknown code", "no variable Batch".
	Msg string

	missing bool // a value env does not hold: a variable, counter, shift code or row
}

// Error returns "{CODE} at byte N: Msg", a code longer than 64 bytes cut to its first 64.
func (e *CodeError) Error() string {
	return clip(e.Code) + " at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// clip cuts what a message quotes of the text to 64 bytes (at a character's start), so that a
// message never copies a long text.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// Expand fills the dynamic text of text from env and returns it with every code it could not
// fill left as written, and those codes' [*CodeError]s joined (nil when there is none).
//
// The grammar is the maker's: a code in braces, {YEAR}; parameters after ";", {COUNTER;Serial};
// codes nest, {TIME;{YEAR}-{MONTH}-{DAYOFMONTH};+20weeks}. The codes:
//
//   - {YEAR} (4 digits), {MONTH} (2), {DAYOFMONTH} (2), {DAYOFYEAR} (3): the clock's date.
//   - {TIME;TEXT;OFFSET}: TEXT filled at the clock moved by OFFSET, a sum of signed terms such
//     as +20weeks or -1year+2days (units year, month, week, day, hour, minute, each with or
//     without s), which may hold codes (+{VARIABLE;WEEKS}weeks). Years and months move the
//     calendar and keep the day, or take the month's last day when it has fewer (31 January +
//     1 month is 28 or 29 February); weeks and days move the calendar date; hours and minutes
//     the clock.
//   - {VARIABLE;Name}, {COUNTER;Name}, {SHIFTCODE;Name}: from env.
//   - Numbers (the date codes and COUNTER) take formatting parameters: WIDTH=n (at least n
//     digits, padded on the left; a negative number padded with a digit keeps its sign first,
//     -005), PADDING=c (the pad character, default 0), FORMAT=alpha
//     (1 = A, 27 = AA), FORMAT=shortmonth (1 = JAN), FORMAT=shortweekday (1 = MON),
//     FORMAT={A;B;C} (a list, 1-based; {#2020;A;B} makes 2020 the first index) and
//     FORMAT=#0123456789ABCDEF (the number in the base and digits given).
//
// {{Column}} is a table column, filled from env.Row. How a label names a table column is not
// on the maker's pages: this is the convention of this package and of printersim, not the
// maker's. A code not listed here, or one that cannot be filled (a variable env does not hold,
// a {{Column}} without a row), is left as written and reported, as are unbalanced braces.
// Codes nest at most 64 levels deep: a code nested deeper is left as written and reported, so
// that a hostile text fills in time linear in its length. A code whose parameter holds a code
// that cannot be filled is left as written, and only the inner code is reported.
//
// The work is bounded by the text's length: a value from env (a variable, a shift code, a
// cell) that would take the filled text past 16 times text's length plus 4 KiB is left as
// written and reported, at most 32 codes are reported one by one (the last [*CodeError] says
// how many more could not be filled), and a message quotes at most 64 bytes of the text.
func Expand(text string, env *Env) (string, error) {
	if env == nil {
		env = &Env{}
	}
	x := expander{env: env, limit: 16*len(text) + 4096}
	if env.Clock != nil {
		x.now = env.Clock()
	} else {
		x.now = time.Now()
	}
	if strings.IndexByte(text, '{') < 0 && strings.IndexByte(text, '}') < 0 {
		return text, nil
	}
	x.text = text
	x.match = matchBraces(text)
	b := make([]byte, 0, len(text)+16)
	b = x.expand(b, text, 0, x.now)
	if len(x.errs) == 0 {
		return string(b), nil
	}
	if more := x.nerr - len(x.errs); more > 0 {
		last := x.errs[len(x.errs)-1].(*CodeError)
		last.Msg += "; " + strconv.Itoa(more) + " more codes could not be filled, not listed"
	}
	return string(b), errors.Join(x.errs...)
}

type expander struct {
	env   *Env
	text  string  // the text Expand was given
	match []int32 // for each { of text, the index of the } that closes it, or -1
	now   time.Time
	errs  []error // the first maxCodeErrors of the codes that could not be filled
	nerr  int     // how many codes could not be filled
	depth int     // of the code being filled: each level scans the rest of its code once
	// inParam counts the parameters being filled: when anything in one cannot be filled, the
	// code holding it is left as written, so what they would write as written is dropped.
	inParam int
	limit   int // the most bytes a value from env may bring the output to
}

const (
	// maxCodeDepth is how deep codes may nest (see Expand).
	maxCodeDepth = 64
	// maxCodeErrors is how many codes one Expand reports one by one (see Expand).
	maxCodeErrors = 32
)

func (x *expander) fail(code string, off int, msg string) {
	x.nerr++
	if len(x.errs) < maxCodeErrors {
		x.errs = append(x.errs, &CodeError{Code: code, Offset: off, Msg: msg})
	}
}

// asWritten appends s as written, a code that could not be filled; inside a parameter it
// appends nothing, as the code holding the parameter is then left as written itself: a code
// nested 64 levels deep is not copied at each level.
func (x *expander) asWritten(b []byte, s string) []byte {
	if x.inParam > 0 {
		return b
	}
	return append(b, s...)
}

// value appends v, a value from env, unless it would take the output past the limit.
func (x *expander) value(b []byte, code string, off int, v string) []byte {
	if len(b)+len(v) > x.limit {
		x.fail(code, off, "its value of "+strconv.Itoa(len(v))+" bytes would make the filled text longer than "+strconv.Itoa(x.limit)+" bytes")
		return x.asWritten(b, code)
	}
	return append(b, v...)
}

// failMissing is fail for a code whose value env does not hold, which lint, knowing no
// printer's variables, leaves unfilled without calling it a problem.
func (x *expander) failMissing(code string, off int, msg string) {
	n := len(x.errs)
	x.fail(code, off, msg)
	if len(x.errs) > n {
		x.errs[n].(*CodeError).missing = true
	}
}

// matchBraces returns, for each { of text, the index of the } that closes it (-1 when none
// does), found in one pass: a code nested 64 levels deep is not scanned again at each level.
func matchBraces(text string) []int32 {
	m := make([]int32, len(text))
	var open []int32
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '{':
			m[i] = -1
			open = append(open, int32(i))
		case '}':
			if len(open) > 0 {
				m[open[len(open)-1]] = int32(i)
				open = open[:len(open)-1]
			}
		}
	}
	return m
}

// part is a piece of the text Expand was given and its index there.
type part struct {
	s  string
	at int
}

// expand appends s, which is text[at:at+len(s)], with its codes filled at t.
func (x *expander) expand(b []byte, s string, at int, t time.Time) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '}' {
			x.fail("}", i, "} without {")
			b = append(b, c)
			i++
			continue
		}
		if c != '{' {
			j := i + 1
			for j < len(s) && s[j] != '{' && s[j] != '}' {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
			continue
		}
		end := int(x.match[at+i]) - at
		if end < 0 {
			x.fail(s[i:], i, "unclosed {")
			return x.asWritten(b, s[i:])
		}
		b = x.code(b, s[i:end+1], i, at+i, t)
		i = end + 1
	}
	return b
}

// splitCode splits a code's inside, text[at:at+len(inner)], at the semicolons outside nested
// codes, which it steps over.
func (x *expander) splitCode(inner string, at int, parts []part) []part {
	start := 0
	for j := 0; j < len(inner); j++ {
		switch inner[j] {
		case '{':
			j = int(x.match[at+j]) - at // inside a code, every { is closed
		case ';':
			parts = append(parts, part{inner[start:j], at + start})
			start = j + 1
		}
	}
	return append(parts, part{inner[start:], at + start})
}

// splitParams splits a list's inside at the semicolons outside nested braces.
func splitParams(inner string, parts []string) []string {
	depth, start := 0, 0
	for j := 0; j < len(inner); j++ {
		switch inner[j] {
		case '{':
			depth++
		case '}':
			depth--
		case ';':
			if depth == 0 {
				parts = append(parts, inner[start:j])
				start = j + 1
			}
		}
	}
	return append(parts, inner[start:])
}

// code appends the filling of one code, written whole (braces included) in code.
func (x *expander) code(b []byte, code string, off, at int, t time.Time) []byte {
	if x.depth >= maxCodeDepth {
		x.fail(code, off, "codes nest deeper than "+strconv.Itoa(maxCodeDepth)+" levels")
		return x.asWritten(b, code)
	}
	x.depth++
	b = x.fill(b, code, off, at, t)
	x.depth--
	return b
}

// fill appends the filling of code, one level deeper than its caller's (see code).
func (x *expander) fill(b []byte, code string, off, at int, t time.Time) []byte {
	inner := code[1 : len(code)-1]
	if len(inner) >= 2 && inner[0] == '{' && inner[len(inner)-1] == '}' && !strings.ContainsAny(inner[1:len(inner)-1], "{};") {
		col := inner[1 : len(inner)-1]
		if x.env.Row == nil {
			x.failMissing(code, off, "a table column needs a table row")
			return x.asWritten(b, code)
		}
		v, ok := x.env.Row[col]
		if !ok {
			x.fail(code, off, "the row has no column "+clip(col))
			return x.asWritten(b, code)
		}
		return x.value(b, code, off, v)
	}
	var arr [6]part
	parts := x.splitCode(inner, at+1, arr[:0])
	name, params := parts[0].s, parts[1:]
	switch name {
	case "YEAR":
		return x.number(b, code, off, int64(t.Year()), 4, params, t)
	case "MONTH":
		return x.number(b, code, off, int64(t.Month()), 2, params, t)
	case "DAYOFMONTH":
		return x.number(b, code, off, int64(t.Day()), 2, params, t)
	case "DAYOFYEAR":
		return x.number(b, code, off, int64(t.YearDay()), 3, params, t)
	case "TIME":
		if len(params) == 0 || len(params) > 2 {
			x.fail(code, off, "TIME takes a text and an optional offset")
			return x.asWritten(b, code)
		}
		when := t
		if len(params) == 2 {
			offText, ok := x.param(params[1], t)
			if !ok {
				return x.asWritten(b, code)
			}
			var err error
			if when, err = addOffset(t, offText); err != nil {
				x.fail(code, off, err.Error())
				return x.asWritten(b, code)
			}
		}
		return x.expand(b, params[0].s, params[0].at, when)
	case "VARIABLE", "SHIFTCODE":
		if len(params) != 1 {
			x.fail(code, off, name+" takes one name")
			return x.asWritten(b, code)
		}
		key, ok := x.param(params[0], t)
		if !ok {
			return x.asWritten(b, code)
		}
		var v string
		if name == "VARIABLE" {
			v, ok = x.env.Variables[key]
		} else {
			v, ok = shiftCode(x.env.ShiftCodes[key], t)
		}
		if !ok {
			x.failMissing(code, off, "no "+strings.ToLower(name)+" "+clip(key))
			return x.asWritten(b, code)
		}
		return x.value(b, code, off, v)
	case "COUNTER":
		if len(params) == 0 {
			x.fail(code, off, "COUNTER takes a name")
			return x.asWritten(b, code)
		}
		key, ok := x.param(params[0], t)
		if !ok {
			return x.asWritten(b, code)
		}
		if x.env.counters != 0 {
			return x.number(b, code, off, x.counterAt(params[1:]), 0, params[1:], t)
		}
		v, ok := x.env.Counters[key]
		if !ok {
			x.failMissing(code, off, "no counter "+clip(key))
			return x.asWritten(b, code)
		}
		return x.number(b, code, off, v, 0, params[1:], t)
	}
	x.fail(code, off, "unknown code")
	return x.asWritten(b, code)
}

// param fills the codes of a parameter; false when one of them could not be filled (it is
// reported, and the code holding the parameter is left as written).
func (x *expander) param(p part, t time.Time) (string, bool) {
	if strings.IndexByte(p.s, '{') < 0 {
		return p.s, true
	}
	n := x.nerr
	x.inParam++
	b := x.expand(nil, p.s, p.at, t)
	x.inParam--
	if x.nerr > n {
		return "", false
	}
	return string(b), true
}

// number appends v formatted by the parameters WIDTH, PADDING and FORMAT; width is the code's
// own minimum number of digits.
func (x *expander) number(b []byte, code string, off int, v int64, width int, params []part, t time.Time) []byte {
	pad := byte('0')
	format := ""
	ownWidth := true // the code's own width applies to decimal digits only
	for _, p := range params {
		k, val, ok := strings.Cut(p.s, "=")
		if !ok {
			x.fail(code, off, "parameter "+clip(p.s)+" is not NAME=value")
			return x.asWritten(b, code)
		}
		switch k {
		case "WIDTH":
			val, ok := x.param(part{val, p.at + len(k) + 1}, t)
			if !ok {
				return x.asWritten(b, code)
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 64 {
				x.fail(code, off, "WIDTH must be a number from 0 to 64")
				return x.asWritten(b, code)
			}
			width, ownWidth = n, false
		case "PADDING":
			val, ok := x.param(part{val, p.at + len(k) + 1}, t)
			if !ok {
				return x.asWritten(b, code)
			}
			if len(val) != 1 {
				x.fail(code, off, "PADDING must be one character")
				return x.asWritten(b, code)
			}
			pad = val[0]
		case "FORMAT":
			format = val // a list's braces are not codes
		default:
			x.fail(code, off, "unknown parameter "+clip(k))
			return x.asWritten(b, code)
		}
	}
	if format != "" && ownWidth {
		width = 0
	}
	var digits string
	var buf [24]byte
	switch {
	case format == "":
		digits = string(strconv.AppendInt(buf[:0], v, 10))
	case format == "alpha":
		if v < 1 {
			x.fail(code, off, "FORMAT=alpha needs a number from 1")
			return x.asWritten(b, code)
		}
		digits = alpha(v)
	case format == "shortmonth" || format == "shortweekday":
		names := shortMonths
		if format == "shortweekday" {
			names = shortWeekdays
		}
		if v < 1 || v > int64(len(names)) {
			x.fail(code, off, "FORMAT="+format+" needs a number from 1 to "+strconv.Itoa(len(names)))
			return x.asWritten(b, code)
		}
		digits = names[v-1]
	case strings.HasPrefix(format, "{") && strings.HasSuffix(format, "}"):
		items := splitParams(format[1:len(format)-1], nil)
		first := int64(1)
		if strings.HasPrefix(items[0], "#") {
			n, err := strconv.ParseInt(items[0][1:], 10, 64)
			if err != nil {
				x.fail(code, off, "a list's first index must be #number")
				return x.asWritten(b, code)
			}
			first, items = n, items[1:]
		}
		i := v - first
		if i < 0 || i >= int64(len(items)) {
			x.fail(code, off, strconv.FormatInt(v, 10)+" is outside the FORMAT list")
			return x.asWritten(b, code)
		}
		digits = items[i]
	case strings.HasPrefix(format, "#") && len(format) > 2:
		set := format[1:]
		if v < 0 {
			x.fail(code, off, "a numeral set needs a number from 0")
			return x.asWritten(b, code)
		}
		digits = numeral(v, set)
	default:
		x.fail(code, off, "unknown FORMAT "+clip(format))
		return x.asWritten(b, code)
	}
	if format == "" && v < 0 && pad >= '0' && pad <= '9' {
		// A negative number padded with digits keeps its sign first: -5 at WIDTH=4 is -005,
		// not 00-5, which would read as another number. The sign counts in the width.
		b = append(b, '-')
		digits = digits[1:]
		width--
	}
	for n := len(digits); n < width; n++ {
		b = append(b, pad)
	}
	return append(b, digits...)
}

var (
	shortMonths   = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	shortWeekdays = []string{"MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"}
)

// alpha writes v >= 1 in bijective base 26: 1 = A, 26 = Z, 27 = AA.
func alpha(v int64) string {
	var buf [16]byte
	i := len(buf)
	for v > 0 {
		v--
		i--
		buf[i] = byte('A' + v%26)
		v /= 26
	}
	return string(buf[i:])
}

// numeral writes v >= 0 in the base len(set) with set's characters as digits.
func numeral(v int64, set string) string {
	base := int64(len(set))
	if v == 0 {
		return set[:1]
	}
	var buf [64]byte
	i := len(buf)
	for v > 0 {
		i--
		buf[i] = set[v%base]
		v /= base
	}
	return string(buf[i:])
}

func shiftCode(shifts []Shift, t time.Time) (string, bool) {
	if len(shifts) == 0 {
		return "", false
	}
	y, m, d := t.Date()
	since := t.Sub(time.Date(y, m, d, 0, 0, 0, 0, t.Location()))
	code := shifts[len(shifts)-1].Code
	for _, s := range shifts {
		if s.Start <= since {
			code = s.Code
		}
	}
	return code, true
}

// addOffset moves t by an offset such as "+20weeks" or "-1year+2days".
func addOffset(t time.Time, off string) (time.Time, error) {
	s := strings.TrimSpace(off)
	if s == "" {
		return t, errors.New("the offset is empty")
	}
	var years, months, days, minutes int64
	for s != "" {
		sign := int64(1)
		switch s[0] {
		case '+':
			s = s[1:]
		case '-':
			sign, s = -1, s[1:]
		}
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 || j > 6 {
			return t, errors.New("offset " + clip(off) + ": a term must be a signed number of at most 6 digits and a unit")
		}
		n, _ := strconv.ParseInt(s[:j], 10, 64)
		n *= sign
		s = s[j:]
		k := 0
		for k < len(s) && s[k] >= 'a' && s[k] <= 'z' {
			k++
		}
		switch strings.TrimSuffix(s[:k], "s") {
		case "year":
			years += n
		case "month":
			months += n
		case "week":
			days += 7 * n
		case "day":
			days += n
		case "hour":
			minutes += 60 * n
		case "minute":
			minutes += n
		default:
			return t, errors.New("offset " + clip(off) + ": unknown unit " + strconv.Quote(s[:k]))
		}
		s = s[k:]
	}
	if years != 0 || months != 0 {
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + years*12 + months
		ny, nm := int(total/12), time.Month(total%12+1)
		if last := daysIn(ny, nm); d > last {
			d = last
		}
		hh, mm, ss := t.Clock()
		t = time.Date(ny, nm, d, hh, mm, ss, t.Nanosecond(), t.Location())
	}
	if days != 0 {
		t = t.AddDate(0, 0, int(days))
	}
	// A time.Duration holds about 292 years: a larger sum of hours and minutes is added in
	// steps that fit, where one step would wrap around to a date in the other direction.
	const step = int64(math.MaxInt64 / int64(time.Minute))
	for minutes > step || minutes < -step {
		d := step
		if minutes < 0 {
			d = -step
		}
		t = t.Add(time.Duration(d) * time.Minute)
		minutes -= d
	}
	return t.Add(time.Duration(minutes) * time.Minute), nil
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
