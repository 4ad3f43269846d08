package label

import (
	"strconv"
	"strings"
	"time"
)

// This file holds the rule for checking a label as it will print: filled at every shape its
// dates and counters can take, as well as written.

// counterShape says at which value lint fills every {COUNTER} (Env.counters).
type counterShape int8

const (
	countersGiven   counterShape = iota // from Env.Counters
	countersLeast                       // the least value of the counter's format
	countersLargest                     // the largest value of its format and width
)

// counterAt returns the value a {COUNTER} with params is filled at under the Env's counter
// shape: for digits, 0 and the largest number of WIDTH digits (9 digits without WIDTH); for a
// numeral set, 0 and its largest number of WIDTH digits; FORMAT=alpha, 1 and WIDTH Zs (one
// without WIDTH); shortmonth 1 and 12, shortweekday 1 and 7; a list, its first and last
// index. The parameters' own mistakes are number's to report.
func (x *expander) counterAt(params []part) int64 {
	width, format := 0, ""
	for _, p := range params {
		k, val, _ := strings.Cut(p.s, "=")
		switch k {
		case "WIDTH":
			// A WIDTH of dynamic text is filled by number, which reports it; here it is
			// read only when written as a number, so that nothing is reported twice.
			if n, err := strconv.Atoi(val); err == nil && n > 0 {
				width = n
			}
		case "FORMAT":
			format = val
		}
	}
	least := x.env.counters == countersLeast
	switch {
	case format == "alpha":
		if least {
			return 1
		}
		v := int64(0) // Z...Z of width letters: 26 + 26^2 + ... + 26^width
		for i, p := 0, int64(1); i < max(width, 1) && i < 12; i++ {
			p *= 26
			v += p
		}
		return v
	case format == "shortmonth" || format == "shortweekday":
		if least {
			return 1
		}
		if format == "shortmonth" {
			return int64(len(shortMonths))
		}
		return int64(len(shortWeekdays))
	case strings.HasPrefix(format, "{") && strings.HasSuffix(format, "}"):
		items := splitParams(format[1:len(format)-1], nil)
		first := int64(1)
		if n, err := strconv.ParseInt(strings.TrimPrefix(items[0], "#"), 10, 64); err == nil && strings.HasPrefix(items[0], "#") {
			first, items = n, items[1:]
		}
		if least || len(items) == 0 {
			return first
		}
		return first + int64(len(items)) - 1
	}
	if least {
		return 0
	}
	base := int64(10)
	if strings.HasPrefix(format, "#") && len(format) > 2 {
		base = int64(len(format) - 1)
	}
	if width == 0 {
		width = 9
	}
	v := int64(1)
	for i := 0; i < width && v <= (1<<62)/base; i++ {
		v *= base
	}
	return v - 1
}

// Lint returns the problems of the label as it will print: those [Label.Problems] finds in
// the label as written, then those of the label filled from env ([Label.Fill], then
// Problems) at every shape its dynamic text can take: dates at env's clock (today), on 31
// December, on 1 January and on 29 February, each with every counter at the least and at the
// largest value its format and width take (0 and 999999 for WIDTH=6). The first problem the
// filling shows at a place is reported, once, saying at which shapes when not at all of them:
//
//	objs[0].apps[1].value: AI (17): ... (filled on 2027-02-29)
//
// A code that cannot be filled (unknown, or with a parameter it does not take) is a problem.
// env gives the table row of {{Column}} and the variables; a code whose value env does not
// hold (a variable, a shift code, a column without a row) is left unfilled and is no
// problem, and a value that still holds it is not checked, as in Problems.
func (l *Label) Lint(env *Env) Problems {
	return l.lintShapes(env, l.Problems(), (*Label).Problems, true)
}

// LintWarnings is [Label.Lint] for the GS1 symbol rules: the [Label.Warnings] at dpi of the
// label as written, then those of the label filled at every shape its dynamic text can take
// (a counter at its largest value may make a GS1-128 too long), once a place, saying at which
// shapes when not at all of them. What cannot be filled is Lint's problem, not a warning.
func (l *Label) LintWarnings(env *Env, dpi float64) Problems {
	return l.lintShapes(env, l.Warnings(dpi), func(f *Label) Problems { return f.Warnings(dpi) }, false)
}

// lintShapes adds to ps, found in the label as written, what check finds in the label filled
// at each shape, and, with fillErrors, what could not be filled.
func (l *Label) lintShapes(env *Env, ps Problems, check func(*Label) Problems, fillErrors bool) Problems {
	if l == nil {
		return ps
	}
	e := Env{}
	if env != nil {
		e = *env
	}
	now := time.Now()
	if e.Clock != nil {
		now = e.Clock()
	}
	y := now.Year()
	at := func(year int, m time.Month, d int) time.Time {
		return time.Date(year, m, d, now.Hour(), now.Minute(), now.Second(), now.Nanosecond(), now.Location())
	}
	leap := y
	for daysIn(leap, time.February) != 29 {
		leap++
	}
	var dates []time.Time
	for _, d := range []time.Time{now, at(y, time.December, 31), at(y+1, time.January, 1), at(leap, time.February, 29)} {
		seen := false
		for _, o := range dates {
			seen = seen || sameDay(o, d)
		}
		if !seen {
			dates = append(dates, d)
		}
	}
	shapes := []counterShape{countersLeast, countersLargest}

	type found struct {
		p        *Problem
		dates    map[int]bool
		counters map[counterShape]bool
	}
	written := make(map[string]bool, len(ps))
	for _, p := range ps {
		written[p.Error()] = true
	}
	var order []string
	byKey := map[string]*found{}
	for di, d := range dates {
		for _, cs := range shapes {
			e := e
			e.Clock = func() time.Time { return d }
			e.counters = cs
			filled, err := l.fill(&e, true)
			if filled == nil {
				return append(ps, &Problem{Msg: err.Error()})
			}
			var unfilled Problems
			if fillErrors {
				unfilled = ProblemsOf(err)
			}
			for _, p := range append(unfilled, check(filled)...) {
				if written[p.Error()] {
					continue
				}
				// One problem a place: {YEAR} in AI (17) is one problem, not one a year.
				k := p.Path
				f := byKey[k]
				if f == nil {
					f = &found{p: p, dates: map[int]bool{}, counters: map[counterShape]bool{}}
					byKey[k] = f
					order = append(order, k)
				}
				f.dates[di] = true
				f.counters[cs] = true
			}
		}
	}
	for _, k := range order {
		f := byKey[k]
		var where []string
		if len(f.dates) < len(dates) {
			for di, d := range dates {
				if f.dates[di] {
					where = append(where, "filled on "+d.Format("2006-01-02"))
					break
				}
			}
		}
		if len(f.counters) < len(shapes) {
			if f.counters[countersLeast] {
				where = append(where, "counters at their least value")
			} else {
				where = append(where, "counters at their largest value")
			}
		}
		msg := f.p.Msg
		if len(where) > 0 {
			msg += " (" + strings.Join(where, ", ") + ")"
		}
		ps = append(ps, &Problem{Path: f.p.Path, Msg: msg})
	}
	return ps
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}
