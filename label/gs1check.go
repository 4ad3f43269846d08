package label

import (
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/label/gs1"
)

// gs1Apps checks the apps of a GS1 object against the GS1 Barcode Syntax Dictionary (package
// gs1): each entry's AI and value. The rules between AIs (an AI that needs or excludes
// another) are the label's, over all its GS1 symbols (gs1Rules). An entry whose value holds
// dynamic text is checked once filled (Fill, then Validate); an entry whose id or value this
// file's other checks already refuse is not checked again.
func (v *validator) gs1Apps(at string, apps []App) {
	els := make([]gs1.Element, len(apps))
	skip := make([]bool, len(apps))
	dynamic := false
	for i, a := range apps {
		els[i] = gs1.Element{AI: a.ID, Value: a.Value}
		if isDynamic(a.ID) || isDynamic(a.Value) {
			dynamic = true
			skip[i] = true
		}
		if a.Value == "" || !allDigits(a.ID) || len(a.ID) < 2 || len(a.ID) > 4 {
			skip[i] = true
		}
	}
	var errs []*gs1.Error
	if dynamic {
		for i, el := range els {
			if !skip[i] {
				for _, e := range gs1.Errors([]gs1.Element{el}) {
					if e.Field != "" {
						e.Index = i
						errs = append(errs, e)
					}
				}
			}
		}
	} else {
		errs = gs1.Errors(els)
	}
	for _, e := range errs {
		if skip[e.Index] || e.Field == "" { // a rule between AIs: gs1Rules
			continue
		}
		p := at + ".apps[" + strconv.Itoa(e.Index) + "]"
		switch e.Field {
		case "ai":
			p += ".id"
		case "value":
			p += ".value"
		}
		v.add(p, e.Msg)
	}
}

// gs1Plain checks the raw element string of a -Plain object AI by AI, a variable-length value
// ending at a GS (0x1D) or at the end: objs[2].text: element 1: AI (17): month 13 does not
// exist. Text holding dynamic text is checked once filled.
func (v *validator) gs1Plain(at string, text string) {
	if text[0] == '\x1d' {
		// The symbol's FNC1 in first position is the printer's: a GS before the first AI is
		// read as data, and the symbol scans as not GS1.
		v.add(at+".text", "starts with a GS (0x1D): a -Plain string starts with its first AI")
		return
	}
	els, err := gs1.ParseRaw(text)
	if err != nil {
		v.add(at+".text", "GS1 element string: "+err.Error())
		return
	}
	for _, e := range gs1.Errors(els) {
		if e.Field != "" { // a rule between AIs is gs1Rules'
			v.add(at+".text", e.Error())
		}
	}
}

// gs1Rules checks the rules between AIs (an AI that needs or excludes another) over every GS1
// symbol of the label, as GS1 evaluates them over all the data carriers of an item: (02) on
// one GS1-128 is satisfied by (37) on another, and (01) on a GS1 DataMatrix excludes (02)
// on a GS1-128 beside it; an EAN-13, UPC-A or ITF-14 (an ITF of 14 digits) carries AI (01).
// A value of dynamic text does not change which AIs are present. Each is named on the first entry of the AI that has the rule:
// objs[0].apps[1]: AI (02) needs AI (37). A label where an AI or a -Plain string holds
// dynamic text has them checked once filled; a -Plain string that cannot be read (a problem
// of its own) adds no AI.
func (v *validator) gs1Rules(objs []Object) {
	type carried struct {
		path  string // objs[0].apps[1], or objs[3].text for a -Plain string
		index int    // the element's index in a -Plain string; -1 for an apps entry
	}
	var els []gs1.Element
	var where []carried
	ok := true
	eachObject(objs, "objs", func(o Object, at string) bool {
		switch o := o.(type) {
		case *GS1128, *GS1DataMatrix, *GS1QRCode:
			for i, a := range gs1AppsOf(o) {
				if isDynamic(a.ID) {
					ok = false
					return false
				}
				els = append(els, gs1.Element{AI: a.ID, Value: a.Value})
				where = append(where, carried{at + ".apps[" + strconv.Itoa(i) + "]", -1})
			}
		case *EAN13, *UPCA, *ITF:
			// EAN-13 and UPC-A carry a GTIN, AI (01); so does ITF-14, an ITF of 14 digits.
			text := Or(linearText(o), "")
			if _, itf := o.(*ITF); text == "" || itf && (len(text) != 14 || !allDigits(text)) {
				return true
			}
			els = append(els, gs1.Element{AI: "01", Value: text})
			where = append(where, carried{at + ".text", -1})
		case *GS1DataMatrixPlain, *GS1QRCodePlain:
			text := Or(plainText(o), "")
			if text == "" {
				return true
			}
			if isDynamic(text) {
				ok = false
				return false
			}
			pels, err := gs1.ParseRaw(text) // one that cannot be read is reported and adds nothing
			if err != nil {
				return true
			}
			for i, el := range pels {
				els = append(els, el)
				where = append(where, carried{at + ".text", i})
			}
		}
		return true
	})
	if !ok || len(els) == 0 {
		return
	}
	name := func(j int) string {
		if where[j].index < 0 {
			return where[j].path
		}
		return where[j].path + " element " + strconv.Itoa(where[j].index)
	}
	var rules Problems
	for _, e := range gs1.RuleErrors(els, name) {
		w := where[e.Index]
		msg := e.Msg
		if w.index >= 0 {
			msg = "element " + strconv.Itoa(w.index) + ": " + msg
		}
		rules = append(rules, &Problem{Path: w.path, Msg: msg})
	}
	if len(rules) == 0 {
		return
	}
	// Problems come in the order of the label: each rule after its object's other problems.
	merged := make(Problems, 0, len(v.ps)+len(rules))
	for _, p := range v.ps {
		for len(rules) > 0 && objectOrder(rules[0].Path, p.Path) < 0 {
			merged, rules = append(merged, rules[0]), rules[1:]
		}
		merged = append(merged, p)
	}
	v.ps = append(merged, rules...)
}

// objectOrder compares the objects two paths are in ("objs[2].children[0].x" is in objs[2]'s
// child 0) in the label's order, a group before its children, a path of no object before all:
// -1, 0 or 1.
func objectOrder(a, b string) int {
	for {
		ia, ra, oka := nextIndex(a)
		ib, rb, okb := nextIndex(b)
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return -1
		case !okb:
			return 1
		case ia != ib:
			if ia < ib {
				return -1
			}
			return 1
		}
		a, b = ra, rb
	}
}

// nextIndex reads the index of "objs[N]" or ".children[N]" at the start of path.
func nextIndex(path string) (n int, rest string, ok bool) {
	for _, prefix := range []string{"objs[", ".children["} {
		if strings.HasPrefix(path, prefix) {
			path = path[len(prefix):]
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return 0, "", false
			}
			n, err := strconv.Atoi(path[:end])
			return n, path[end+1:], err == nil
		}
	}
	return 0, "", false
}

// gs1AppsOf returns the apps of a GS1 object that has them.
func gs1AppsOf(o Object) []App {
	switch o := o.(type) {
	case *GS1128:
		return o.Apps
	case *GS1DataMatrix:
		return o.Apps
	case *GS1QRCode:
		return o.Apps
	}
	return nil
}

// linearText returns the data of an EAN-13, UPC-A or ITF object.
func linearText(o Object) *string {
	switch o := o.(type) {
	case *EAN13:
		return o.Text
	case *UPCA:
		return o.Text
	case *ITF:
		return o.Text
	}
	return nil
}

// plainText returns the raw element string of a -Plain object.
func plainText(o Object) *string {
	switch o := o.(type) {
	case *GS1DataMatrixPlain:
		return o.Text
	case *GS1QRCodePlain:
		return o.Text
	}
	return nil
}

// eachObject calls fn with every object of objs and of their groups, depth first in the
// label's order, and its path (objs[2].children[0]), until fn returns false.
func eachObject(objs []Object, path string, fn func(o Object, at string) bool) bool {
	for i, o := range objs {
		if nilObject(o) {
			continue
		}
		at := path + "[" + strconv.Itoa(i) + "]"
		if !fn(o, at) {
			return false
		}
		if g, isGroup := o.(*Group); isGroup && !eachObject(g.Children, at+".children", fn) {
			return false
		}
	}
	return true
}
