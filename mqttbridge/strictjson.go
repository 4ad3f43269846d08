package mqttbridge

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxStrictDepth bounds the nesting the strict check follows, as encoding/json bounds its own.
const maxStrictDepth = 10000

// strictError is a payload the strict check refuses. topID says the top-level "id" itself is
// at fault (a lone surrogate in it, or two of it), so no id can be named in the answer.
type strictError struct {
	msg   string
	topID bool
}

func (e *strictError) Error() string { return e.msg }

// checkStrictJSON refuses what encoding/json would take silently and change: a string with
// an escaped UTF-16 surrogate that has no partner ("\ud800", which it turns into U+FFFD, so
// "o-\ud800" and "o-\ufffd" would be one id), and an object with two members of one name
// (it keeps the last, so a second "id" would replace the first). Both count at any depth.
// Names are compared as decoded, so "id" and "\u0069d" are one name. payload must be valid
// UTF-8 JSON (json.Valid); anything else is left to the decoder's own errors.
func checkStrictJSON(payload []byte) *strictError {
	type frame struct {
		obj  bool
		key  bool // in an object: the next string is a member name
		path string
		keys map[string]struct{}
		last string // the last member name, for the path of its value
	}
	var stack []frame
	for i := 0; i < len(payload); i++ {
		switch c := payload[i]; c {
		case '{', '[':
			if len(stack) >= maxStrictDepth {
				return nil // encoding/json refuses it as too deep
			}
			path := ""
			if n := len(stack); n > 0 {
				top := stack[n-1]
				if top.obj {
					path = joinPath(top.path, top.last)
				} else {
					path = top.path + "[]"
				}
			}
			stack = append(stack, frame{obj: c == '{', key: c == '{', path: path})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].key = true
			}
		case '"':
			end, s, lone := scanString(payload, i)
			n := len(stack)
			isKey := n > 0 && stack[n-1].obj && stack[n-1].key
			atTop := n == 1 && stack[0].obj
			if lone != "" {
				where := "a string"
				switch {
				case isKey:
					where = "a member name in " + describePath(stack[n-1].path)
				case n > 0 && stack[n-1].obj:
					where = describePath(joinPath(stack[n-1].path, stack[n-1].last))
				case n > 0:
					where = "a string in " + describePath(stack[n-1].path)
				}
				return &strictError{
					msg:   fmt.Sprintf("%s holds %s, half of a UTF-16 surrogate pair without its other half, which cannot arrive as sent", where, lone),
					topID: atTop && !isKey && stack[0].last == "id",
				}
			}
			if isKey {
				f := &stack[n-1]
				if f.keys == nil {
					f.keys = map[string]struct{}{}
				}
				if _, dup := f.keys[s]; dup {
					return &strictError{
						msg:   fmt.Sprintf("member %q appears twice in %s", clip(s), describePath(f.path)),
						topID: atTop && s == "id",
					}
				}
				f.keys[s] = struct{}{}
				f.last = s
				f.key = false
			}
			i = end
		}
	}
	return nil
}

// joinPath names a member's value: "job", "job.labelData", "job.labelData.objs[]".
func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// describePath names a place in the payload for an error: the command itself, or a quoted path.
func describePath(path string) string {
	if path == "" {
		return "the command"
	}
	return strconv.Quote(clip(path))
}

// scanString reads the JSON string starting at payload[start] ('"'). It returns the index of
// its closing quote, its decoded text, and the first lone surrogate escape in it ("\ud800"),
// or "" when every escaped surrogate has its partner.
func scanString(payload []byte, start int) (end int, s string, lone string) {
	var b strings.Builder
	i := start + 1
	for i < len(payload) {
		c := payload[i]
		switch {
		case c == '"':
			return i, b.String(), ""
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		// An escape.
		if i+1 >= len(payload) {
			return len(payload), b.String(), ""
		}
		e := payload[i+1]
		if e != 'u' {
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default: // " \ /
				b.WriteByte(e)
			}
			i += 2
			continue
		}
		r, ok := hex4(payload, i+2)
		if !ok {
			return len(payload), b.String(), ""
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			// A high surrogate must be followed at once by an escaped low one.
			if r2, ok := hex4(payload, i+8); ok && i+7 < len(payload) && payload[i+6] == '\\' && payload[i+7] == 'u' && r2 >= 0xdc00 && r2 <= 0xdfff {
				b.WriteRune(utf16.DecodeRune(r, r2))
				i += 12
				continue
			}
			return len(payload), "", string(payload[i : i+6])
		case utf16.IsSurrogate(r):
			return len(payload), "", string(payload[i : i+6])
		}
		b.WriteRune(r)
		i += 6
	}
	return len(payload), b.String(), ""
}

// hex4 reads the four hex digits at payload[i:i+4].
func hex4(payload []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(payload) {
		return utf8.RuneError, false
	}
	v, err := strconv.ParseUint(string(payload[i:i+4]), 16, 16)
	if err != nil {
		return utf8.RuneError, false
	}
	return rune(v), true
}
