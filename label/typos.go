package label

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/labelprinter/go-labelprinter/internal/suggest"
)

// This file holds the rule for names a label writes that this package does not know but that
// are close to one it does: an object type (GS1128 for GS1-128) or a property (barheight for
// barHeight). The printer would ignore such a name, or draw nothing, so each is a problem
// with "did you mean". A name far from every known one is kept and not reported: it may be
// one of the maker's properties or types that this package does not model.

// typeNames are the object types of the maker's pages, as written in "type".
var typeNames = []string{
	TypeText, TypeRect, TypePolyLine, TypeGroup, TypeStaticBitmap, TypeCode128, TypeGS1128,
	TypeCode39, TypeITF, TypeEAN13, TypeUPCA, TypePDF417, TypeDataMatrix, TypeGS1DataMatrix,
	TypeGS1DataMatrixPlain, TypeGS1QRCode, TypeGS1QRCodePlain,
}

// closest returns the word of words typed is likely a slip for, or "": suggest's choice, when
// it is at most half as many edits away as the word is long (so that zz is not taken for x).
func closest(typed string, words []string) string {
	s := suggest.Closest(typed, words)
	if s == "" {
		return ""
	}
	lt, ls := strings.ToLower(typed), strings.ToLower(s)
	if len(lt) >= 3 && strings.HasPrefix(ls, lt) {
		return s
	}
	if 2*suggest.Distance(lt, ls) > len(ls) {
		return ""
	}
	return s
}

// misspeltType returns the known type an unknown object's type is close to, or "".
func misspeltType(typ string) string {
	if typ == "" {
		return ""
	}
	return closest(typ, typeNames)
}

// misspelt reports each property of p kept in Extra that is not one of p's but close to one,
// and returns the known names so misspelt, so that a mandatory one is not also reported as
// missing.
func (v *validator) misspelt(p props, path string) map[string]bool {
	extra := *p.extra()
	if len(extra) == 0 {
		return nil
	}
	fs := p.fields()
	names := make([]string, len(fs))
	for i := range fs {
		names[i] = fs[i].name
	}
	var meant map[string]bool
	for _, k := range sortedKeys(extra) {
		if lookup(fs, k) != nil {
			continue // a known property of the wrong shape: props reports its shape
		}
		s := closest(k, names)
		if s == "" || s == k {
			continue
		}
		v.add(join(path, k), "not a property this object has (did you mean "+s+"?)")
		if meant == nil {
			meant = map[string]bool{}
		}
		meant[s] = true
	}
	return meant
}

// unknownType reports an object whose type is close to a known one.
func (v *validator) unknownType(at string, u *Unknown) {
	var m struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(u.Raw, &m) != nil {
		return
	}
	typ, ok := decodeString(m.Type)
	if !ok {
		return
	}
	if s := misspeltType(typ); s != "" && s != typ {
		v.add(at+".type", "unknown object type "+strconv.Quote(typ)+" (did you mean "+strconv.Quote(s)+"?)")
	}
}
