package gs1

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Error is one problem [Check] found, on one element.
type Error struct {
	// Index is the element's index in the list checked (0-based); -1 when the problem is not
	// of one element (a key given to CheckDigit).
	Index int
	// AI is the element's AI as written.
	AI string
	// Field is what the problem is about: "ai" (an AI the dictionary does not list), "value"
	// (its value, a value differing from an earlier element of the same AI, a key without
	// its serial beside a digital signature), or "" for the element as a whole (an AI that
	// needs or excludes another).
	Field string
	// Msg says what is wrong, naming the AI: "AI (02) needs AI (37)",
	// "AI (01): check digit is 4, must be 1".
	Msg string
}

// Error returns "element N: Msg".
func (e *Error) Error() string {
	if e.Index < 0 {
		return e.Msg
	}
	return "element " + strconv.Itoa(e.Index) + ": " + e.Msg
}

// Check checks elements against the GS1 Barcode Syntax Dictionary and returns every problem,
// joined with errors.Join, each an [*Error] naming the AI and its index ([Errors] lists them);
// nil when there is none. See the package documentation for what is checked.
func Check(els []Element) error {
	errs := Errors(els)
	if len(errs) == 0 {
		return nil
	}
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// Errors returns what [Check] reports, as a list, in the order of the elements.
func Errors(els []Element) []*Error {
	c := checker{els: els, entries: make([]*entry, len(els))}
	for i, el := range els {
		c.element(i, el)
	}
	// The first element of each AI has its pairs checked; a later one must repeat its value.
	// A few elements are scanned, many looked up.
	var firstOf map[string]int
	if len(els) > 16 {
		firstOf = make(map[string]int, len(els))
	}
	for i, el := range els {
		e := c.entries[i]
		if e == nil {
			continue
		}
		j := -1
		if firstOf != nil {
			if k, seen := firstOf[el.AI]; seen {
				j = k
			} else {
				firstOf[el.AI] = i
			}
		} else {
			for k := 0; k < i; k++ {
				if els[k].AI == el.AI {
					j = k
					break
				}
			}
		}
		if j >= 0 {
			if els[j].Value != el.Value {
				c.add(i, el.AI, "value", "AI ("+el.AI+") appears again with a different value: element "+strconv.Itoa(j)+" has "+strconv.Quote(els[j].Value))
			}
			continue
		}
		c.ex(i, e)
		c.req(i, e)
	}
	c.digsig()
	return c.sorted()
}

// RuleErrors returns the problems of the rules between elements alone, without checking any
// element's value: each req and ex rule of the dictionary (an [*Error] with Field ""), on the
// first element of its AI, as [Errors] reports them. It is for elements carried by several
// symbols of one item, whose rules GS1 evaluates over all of them. name(j) names element j in
// a message ("must not appear with AI (01) (NAME)"); nil names it "element j".
func RuleErrors(els []Element, name func(j int) string) []*Error {
	c := checker{els: els, entries: make([]*entry, len(els)), name: name}
	for i, el := range els {
		if len(el.AI) >= 2 && len(el.AI) <= 4 && allDigits(el.AI) {
			c.entries[i] = lookup(el.AI)
		}
	}
	seen := make(map[string]bool, len(els))
	for i, el := range els {
		if e := c.entries[i]; e != nil && !seen[el.AI] {
			seen[el.AI] = true
			c.ex(i, e)
			c.req(i, e)
		}
	}
	return c.sorted()
}

func (c *checker) sorted() []*Error {
	// Problems are gathered per kind; give them in the order of the elements.
	sort.SliceStable(c.errs, func(a, b int) bool { return c.errs[a].Index < c.errs[b].Index })
	return c.errs
}

type checker struct {
	els     []Element
	entries []*entry
	errs    []*Error
	name    func(j int) string // names element j in a message; nil: "element j"
}

func (c *checker) elementName(j int) string {
	if c.name != nil {
		return c.name(j)
	}
	return "element " + strconv.Itoa(j)
}

func (c *checker) add(i int, ai, field, msg string) {
	c.errs = append(c.errs, &Error{Index: i, AI: ai, Field: field, Msg: msg})
}

// element checks one element alone: its AI, its value's length, character set and linters.
func (c *checker) element(i int, el Element) {
	if len(el.AI) < 2 || len(el.AI) > 4 || !allDigits(el.AI) {
		c.add(i, el.AI, "ai", "AI "+strconv.Quote(el.AI)+" must be 2 to 4 digits")
		return
	}
	e := lookup(el.AI)
	if e == nil {
		c.add(i, el.AI, "ai", "AI ("+el.AI+") is not in the GS1 Barcode Syntax Dictionary")
		return
	}
	c.entries[i] = e
	name := "AI (" + el.AI + ")"
	v := el.Value
	if v == "" {
		c.add(i, el.AI, "value", name+": value is empty")
		return
	}
	if min, max := e.minLen(), e.maxLen(); len(v) < min || len(v) > max {
		want := strconv.Itoa(min)
		if min != max {
			want += " to " + strconv.Itoa(max)
		}
		c.add(i, el.AI, "value", name+": value "+strconv.Quote(v)+" has "+strconv.Itoa(len(v))+" characters, must have "+want)
		return
	}
	off := 0
	for k, p := range e.parts {
		n := min(len(v)-off, p.max)
		if p.opt && n == 0 {
			continue
		}
		comp := v[off : off+n]
		if n < p.min {
			c.add(i, el.AI, "value", name+": value "+strconv.Quote(v)+": component "+strconv.Itoa(k+1)+" has "+strconv.Itoa(n)+" characters, must have "+strconv.Itoa(p.min))
			return
		}
		if err := csets[p.cset](comp); err != nil {
			c.lintProblem(i, el, off, err)
		} else {
			for _, l := range p.linters {
				if f := linters[l]; f != nil {
					if err := f(comp); err != nil {
						c.lintProblem(i, el, off, err)
						break
					}
				}
			}
		}
		off += n
	}
	if off < len(v) {
		c.add(i, el.AI, "value", name+": value "+strconv.Quote(v)+" has "+strconv.Itoa(len(v)-off)+" characters too many")
	}
}

func (c *checker) lintProblem(i int, el Element, off int, err *lintErr) {
	msg := "AI (" + el.AI + "): " + err.msg
	if err.n == 1 {
		msg += " (position " + strconv.Itoa(off+err.pos+1) + " of " + strconv.Quote(el.Value) + ")"
	} else if !strings.Contains(err.msg, el.Value) {
		msg += " (in " + strconv.Quote(el.Value) + ")"
	}
	c.add(i, el.AI, "value", msg)
}

// present returns the index of an element whose AI matches pattern ("01", "31nn") other than
// an element of AI self, or -1.
func (c *checker) present(pattern, self string) int {
	for j, el := range c.els {
		if c.entries[j] == nil || el.AI == self || len(el.AI) != len(pattern) {
			continue
		}
		ok := true
		for k := 0; k < len(pattern); k++ {
			if pattern[k] != 'n' && pattern[k] != el.AI[k] {
				ok = false
				break
			}
		}
		if ok {
			return j
		}
	}
	return -1
}

// ex reports each AI that e excludes and that is present, on e's element.
func (c *checker) ex(i int, e *entry) {
	for _, p := range e.ex {
		if j := c.present(p, e.ai); j >= 0 {
			c.add(i, e.ai, "", "AI ("+e.ai+") must not appear with AI ("+c.els[j].AI+") ("+c.elementName(j)+")")
		}
	}
}

// req reports each req= rule of e that no group of present AIs satisfies, on e's element.
func (c *checker) req(i int, e *entry) {
	for _, alts := range e.req {
		satisfied := false
		for _, group := range alts {
			all := true
			for _, p := range group {
				if c.present(p, e.ai) < 0 {
					all = false
					break
				}
			}
			if all {
				satisfied = true
				break
			}
		}
		if !satisfied {
			c.add(i, e.ai, "", "AI ("+e.ai+") needs AI "+alternatives(alts))
		}
	}
}

// alternatives writes req groups as "(01), (02) or (8006) with (21)".
func alternatives(alts [][]string) string {
	var b strings.Builder
	for k, group := range alts {
		switch {
		case k == 0:
		case k == len(alts)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		for m, p := range group {
			if m > 0 {
				b.WriteString(" with ")
			}
			b.WriteString("(" + p + ")")
		}
	}
	return b.String()
}

// digsig: a digital signature (8030) signs a serialised key, so GDTI (253), GCN (255) and GRAI
// (8003) beside it need their optional serial component.
func (c *checker) digsig() {
	if c.present("8030", "") < 0 {
		return
	}
	for i, el := range c.els {
		e := c.entries[i]
		if e == nil || (e.ai != "253" && e.ai != "255" && e.ai != "8003") {
			continue
		}
		if len(el.Value) == e.minLen() {
			c.add(i, el.AI, "value", "AI ("+el.AI+") needs its serial component beside a digital signature, AI (8030)")
		}
	}
}
