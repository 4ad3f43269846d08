package label

import (
	"strconv"

	"github.com/labelprinter/go-labelprinter/label/gs1"
)

// gs1Apps checks the apps of a GS1 object against the GS1 Barcode Syntax Dictionary (package
// gs1): each entry's AI and value, and, once no entry holds dynamic text, the rules between
// entries (an AI that needs or excludes another), named on the entry that has the rule:
// objs[0].apps[1]: AI (02) needs AI (37). An entry whose value holds dynamic text is checked
// once filled (Fill, then Validate), and so are the rules between entries, which its value
// or AI may change; an entry whose id or value this file's other checks already refuse is not
// checked again.
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
		if skip[e.Index] {
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
	els, err := gs1.ParseRaw(text)
	if err != nil {
		v.add(at+".text", "GS1 element string: "+err.Error())
		return
	}
	for _, e := range gs1.Errors(els) {
		v.add(at+".text", e.Error())
	}
}
