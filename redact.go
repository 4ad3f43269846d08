package labelprinter

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The redaction rule, the one place it lives. A server or proxy that echoes a request header
// may echo it raw, JSON-escaped ("\/", "\u002B", as encoding/json, PHP and .NET write it),
// percent-encoded or as HTML character references, and an error body is cut at 64 KiB. So
// every text the SDK puts in an error or a log line loses every run of credentialWindow bytes
// of a credential (the whole credential when it is shorter), looked for in the text as it is
// and decoded once and twice, and every run found is replaced, in the text as it was, by
// redactedMark.
const (
	credentialWindow = 12
	redactedMark     = "[REDACTED]"
	// decodeDepth is how many decodings a credential is looked for through: "%252F" is "/"
	// percent-encoded twice, "\u0025" then "2F" JSON over percent.
	decodeDepth = 2
	// maxExpansion bounds the bytes one byte of a credential can take in the text after
	// decodeDepth encodings ("\u005Cu0041" is "A", 11 bytes).
	maxExpansion = 16
)

// credentialHeader reports whether a WithHeader header carries a credential, by its name:
// Authorization, Proxy-Authorization, Cookie, or any name holding "auth", "token", "key",
// "secret", "pass" or "session", case aside (X-Api-Key, X-Auth-Token, Private-Token).
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "cookie" {
		return true
	}
	for _, w := range []string{"auth", "token", "key", "secret", "pass", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// headerCredentials returns the credentials in a credential header's value: the value, and for
// "<scheme> <credentials>" (Authorization: Bearer ..., Basic ...) the part after the scheme,
// which a server may echo on its own and which may be shorter than a run of the whole.
func headerCredentials(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	out := []string{v}
	if i := strings.IndexAny(v, " \t"); i > 0 {
		if rest := strings.TrimSpace(v[i+1:]); rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// redactor removes the Client's credentials from text. A nil *redactor removes nothing.
type redactor struct {
	creds []credential
	// slack is how far past a cut the text must be read, so that a credential straddling the
	// cut is seen whole: its longest encoded form.
	slack int
}

// credential is one secret in canonical form (see canonByte), with its windows.
type credential struct {
	whole []byte
	grams map[string]struct{} // every credentialWindow-byte run, when whole is longer
	has   [256]bool           // the bytes whole holds, to skip positions fast
}

// newRedactor returns a redactor for the non-empty secrets, or nil when there are none.
func newRedactor(secrets []string) *redactor {
	r := &redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		cr := credential{whole: make([]byte, len(s))}
		for i := 0; i < len(s); i++ {
			cr.whole[i] = canonByte(s[i])
			cr.has[cr.whole[i]] = true
		}
		if len(s) > credentialWindow {
			cr.grams = make(map[string]struct{}, len(s)-credentialWindow+1)
			for i := 0; i+credentialWindow <= len(cr.whole); i++ {
				cr.grams[string(cr.whole[i:i+credentialWindow])] = struct{}{}
			}
		}
		r.creds = append(r.creds, cr)
		// Bounded: a credential longer than a page still loses every run inside the cut.
		r.slack = min(max(r.slack, maxExpansion*len(s)), maxErrorBody)
	}
	if len(r.creds) == 0 {
		return nil
	}
	return r
}

// canonByte makes a space and a plus one byte, as form encoding writes a space as "+"; and a
// tab and a "t" one byte, as "\t" decodes to a tab, so a credential's "t" that follows a
// literal backslash ("\t%D9" for "t\xd9") is still found. Both only ever redact more.
func canonByte(b byte) byte {
	switch b {
	case ' ':
		return '+'
	case '\t':
		return 't'
	}
	return b
}

// readCut reads at most n bytes of body for an error, with credentials removed. It reads past
// n by the longest encoded credential, removes, and only then cuts, so a credential that
// straddles the cut is removed whole rather than kept minus its last bytes.
func (r *redactor) readCut(body io.Reader, n int) []byte {
	extra := 0
	if r != nil {
		extra = r.slack
	}
	b, _ := io.ReadAll(io.LimitReader(body, int64(n+extra)))
	out := r.redact(b)
	if len(out) <= n {
		return out
	}
	out = out[:n]
	// A mark cut in two would read as text of the body.
	for k := len(redactedMark) - 1; k > 0; k-- {
		if bytes.HasSuffix(out, []byte(redactedMark[:k])) {
			return out[:len(out)-k]
		}
	}
	return out
}

// Redact returns s without the Client's credentials, by the rule its errors and log lines
// follow: every run of 12 bytes of a credential (all of it when shorter), in any spelling,
// becomes "[REDACTED]". The credentials are those of WithBearerToken, WithBasicAuth, credential
// WithHeader headers, WithRedactedValues, and what WithRedactedValuesFunc gives at this call. It is for text you write beside the Client's
// errors that did not pass through it, such as your transport's own errors, so that one rule
// covers both. A Client without credentials returns s unchanged.
func (c *Client) Redact(s string) string { return c.redactorNow().redactString(s) }

// redactString is redact for a string.
func (r *redactor) redactString(s string) string {
	if r == nil || s == "" {
		return s
	}
	b := []byte(s)
	if out := r.redact(b); &out[0] != &b[0] {
		return string(out)
	}
	return s
}

// redact returns b with every run of a credential replaced by redactedMark. b is not modified.
func (r *redactor) redact(b []byte) []byte {
	if r == nil {
		return b
	}
	spans := r.find(b)
	if len(spans) == 0 {
		return b
	}
	slices.SortFunc(spans, func(x, y span) int { return x.from - y.from })
	out := make([]byte, 0, len(b))
	at := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		out = append(out, b[at:from]...)
		out = append(out, redactedMark...)
		at = to
	}
	return append(out, b[at:]...)
}

// span is a byte range [from, to) of the original text.
type span struct{ from, to int }

// find returns the ranges of b that spell a run of a credential, in b itself and through
// each decoding.
func (r *redactor) find(b []byte) []span {
	var spans []span
	text := b
	var from, to []int32 // offsets in b of each byte of text; nil while text is b
	for depth := 0; ; depth++ {
		spans = r.match(text, from, to, spans)
		if depth == decodeDepth {
			return spans
		}
		next, nf, nt, changed := decodeOnce(text)
		if !changed {
			return spans
		}
		if from != nil {
			for i := range nf {
				nf[i], nt[i] = from[nf[i]], to[nt[i]-1]
			}
		}
		text, from, to = next, nf, nt
	}
}

// match appends the ranges of b (through from/to) where text holds a credential run.
func (r *redactor) match(text []byte, from, to []int32, spans []span) []span {
	add := func(i, j int) { // text[i:j]
		if from == nil {
			spans = append(spans, span{i, j})
		} else {
			spans = append(spans, span{int(from[i]), int(to[j-1])})
		}
	}
	canon := make([]byte, len(text))
	for i, c := range text {
		canon[i] = canonByte(c)
	}
	for ci := range r.creds {
		cr := &r.creds[ci]
		if cr.grams == nil {
			for i := 0; ; {
				k := bytes.Index(canon[i:], cr.whole)
				if k < 0 {
					break
				}
				add(i+k, i+k+len(cr.whole))
				i += k + 1
			}
			continue
		}
		for i := 0; i+credentialWindow <= len(canon); i++ {
			if !cr.has[canon[i]] || !cr.has[canon[i+credentialWindow-1]] {
				continue
			}
			if _, ok := cr.grams[string(canon[i:i+credentialWindow])]; ok {
				add(i, i+credentialWindow)
			}
		}
	}
	return spans
}

// decodeOnce undoes one layer of the escapes a server may echo a credential in: JSON
// ("\/", "\\", "\"", "\n"..., "\uXXXX" with surrogate pairs), percent-encoding ("%2F") and
// HTML character references ("&#47;", "&#x2F;", "&amp;", "&quot;", "&apos;", "&lt;", "&gt;").
// For each byte of the result, from and to give the range of text it came from. changed is
// false when text holds no escape.
func decodeOnce(text []byte) (out []byte, from, to []int32, changed bool) {
	const special = "\\%&"
	if !bytes.ContainsAny(text, special) {
		return nil, nil, nil, false
	}
	out = make([]byte, 0, len(text))
	from = make([]int32, 0, len(text))
	to = make([]int32, 0, len(text))
	var rb [utf8.UTFMax]byte
	for i := 0; i < len(text); {
		// Plain bytes up to the next escape come through one for one.
		j := bytes.IndexAny(text[i:], special)
		if j < 0 {
			j = len(text)
		} else {
			j += i
		}
		for k := i; k < j; k++ {
			from = append(from, int32(k))
			to = append(to, int32(k+1))
		}
		out = append(out, text[i:j]...)
		if i = j; i == len(text) {
			break
		}
		var dec []byte
		n := 0
		switch c := text[i]; {
		case c == '\\' && i+1 < len(text):
			if r, m := jsonEscape(text[i:]); m > 0 {
				dec, n = rb[:utf8.EncodeRune(rb[:], r)], m
			}
		case c == '%' && i+2 < len(text) && isHex(text[i+1]) && isHex(text[i+2]):
			rb[0] = unhex(text[i+1])<<4 | unhex(text[i+2])
			dec, n = rb[:1], 3
		case c == '&':
			if r, m := htmlReference(text[i:]); m > 0 {
				dec, n = rb[:utf8.EncodeRune(rb[:], r)], m
			}
		}
		if n == 0 {
			dec, n = text[i:i+1], 1
		} else {
			changed = true
		}
		for range dec {
			from = append(from, int32(i))
			to = append(to, int32(i+n))
		}
		out = append(out, dec...)
		i += n
	}
	return out, from, to, changed
}

// jsonEscape decodes the JSON escape at the start of b and returns its rune and length, or
// n == 0 when b does not start with one. "\b", "\f", "\n" and "\r" are left as text: no
// header value holds those control characters, and decoding them would hide the letter of a
// credential that follows a literal backslash ("\b%D9" for "b\xd9"). "\t" is decoded, as a
// header value may hold a tab (canonByte keeps the "t" findable).
func jsonEscape(b []byte) (r rune, n int) {
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) {
			if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
				if r2, ok := hex4(b[8:]); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return d, 12
					}
				}
			}
			return utf8.RuneError, 6
		}
		return r, 6
	}
	return 0, 0
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		if !isHex(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, true
}

// htmlReference decodes the character reference at the start of b ("&#47;", "&#x2f;" or one
// of the five XML names) and returns its rune and length, or n == 0.
func htmlReference(b []byte) (r rune, n int) {
	end := bytes.IndexByte(b[:min(len(b), 12)], ';')
	if end < 2 {
		return 0, 0
	}
	ref := b[1:end]
	if ref[0] == '#' {
		digits, base := ref[1:], 10
		if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
			digits, base = digits[1:], 16
		}
		if len(digits) == 0 {
			return 0, 0
		}
		for _, c := range digits {
			switch {
			case base == 10 && c >= '0' && c <= '9', base == 16 && isHex(c):
				r = r*rune(base) + rune(unhex(c))
			default:
				return 0, 0
			}
		}
		if !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		return r, end + 1
	}
	switch string(ref) {
	case "amp":
		return '&', end + 1
	case "lt":
		return '<', end + 1
	case "gt":
		return '>', end + 1
	case "quot":
		return '"', end + 1
	case "apos":
		return '\'', end + 1
	}
	return 0, 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
