package gs1

import (
	"strconv"
	"strings"
)

// SyntaxError is an element string that cannot be split into elements: what is wrong, at
// which byte of the string.
type SyntaxError struct {
	// Offset is the byte of the string where the problem is (0-based).
	Offset int
	// Msg says what is wrong.
	Msg string
}

// Error returns "at byte N: Msg".
func (e *SyntaxError) Error() string { return "at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg }

// ParseBracketed splits an element string written with its AIs in brackets,
// "(01)09501101530003(17)261231(10)AB12", into its elements. A "(" inside a value is written
// "\(". An AI must be 2 to 4 digits; whether the dictionary knows it, and whether its value is
// right, is for [Check]. The error is a [*SyntaxError].
func ParseBracketed(s string) ([]Element, error) {
	var els []Element
	i := 0
	if s == "" {
		return nil, &SyntaxError{Offset: 0, Msg: "element string is empty"}
	}
	for i < len(s) {
		if s[i] != '(' {
			return nil, &SyntaxError{Offset: i, Msg: "expected \"(\" and an AI, found " + quoteAt(s, i)}
		}
		end := strings.IndexByte(s[i+1:], ')')
		if end < 0 {
			return nil, &SyntaxError{Offset: i, Msg: "AI " + strconv.Quote(s[i:]) + " has no closing \")\""}
		}
		ai := s[i+1 : i+1+end]
		if len(ai) < 2 || len(ai) > 4 || !allDigits(ai) {
			return nil, &SyntaxError{Offset: i + 1, Msg: "AI " + strconv.Quote(ai) + " must be 2 to 4 digits"}
		}
		i += end + 2
		var v strings.Builder
		for i < len(s) && s[i] != '(' {
			if s[i] == '\\' && i+1 < len(s) && s[i+1] == '(' {
				v.WriteByte('(')
				i += 2
				continue
			}
			v.WriteByte(s[i])
			i++
		}
		els = append(els, Element{AI: ai, Value: v.String()})
	}
	return els, nil
}

// ParseRaw splits an element string as a barcode carries it, "0109501101530003172612311" +
// "0AB12": each AI is found in the dictionary by its first digits; the value of an AI with a
// predefined length (01, 17, ...) ends at that length or at a GS (0x1D), and any other value at
// a GS or at the end. A GS at the start, or after a value of predefined length, is allowed.
// An AI the dictionary does not know cannot be split from its value, so it is a
// [*SyntaxError].
func ParseRaw(s string) ([]Element, error) {
	var els []Element
	i := 0
	if i < len(s) && s[i] == GS {
		i++
	}
	if i == len(s) {
		return nil, &SyntaxError{Offset: i, Msg: "element string is empty"}
	}
	for i < len(s) {
		e := lookupPrefix(s[i:])
		if e == nil {
			return nil, &SyntaxError{Offset: i, Msg: "no AI of the GS1 dictionary starts " + strconv.Quote(head(s[i:], 4))}
		}
		i += len(e.ai)
		end := strings.IndexByte(s[i:], GS)
		if end < 0 {
			end = len(s) - i
		}
		if n := e.maxLen(); e.fixed && n < end {
			end = n
		}
		els = append(els, Element{AI: e.ai, Value: s[i : i+end]})
		i += end
		if i < len(s) && s[i] == GS {
			i++
		}
	}
	return els, nil
}

// Bracketed writes elements as "(01)09501101530003(10)AB12", a "(" in a value as "\(". GS1's
// bracketed syntax has no escape for a backslash, so a value ending in one, followed by
// another element, reads back differently; no GS1 character set holds a backslash, so Check
// refuses such a value anyway.
func Bracketed(els []Element) string {
	var b strings.Builder
	for _, el := range els {
		b.WriteByte('(')
		b.WriteString(el.AI)
		b.WriteByte(')')
		b.WriteString(strings.ReplaceAll(el.Value, "(", `\(`))
	}
	return b.String()
}

// Raw writes elements as a barcode carries them: each AI and its value, and a GS (0x1D) after
// a value whose AI has no predefined length when another element follows.
func Raw(els []Element) string {
	var b strings.Builder
	for i, el := range els {
		b.WriteString(el.AI)
		b.WriteString(el.Value)
		if i < len(els)-1 && !PredefinedLength(el.AI) {
			b.WriteByte(GS)
		}
	}
	return b.String()
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func quoteAt(s string, i int) string { return strconv.Quote(head(s[i:], 8)) }
