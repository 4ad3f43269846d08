package labelprinter

import (
	"bytes"
	"encoding/json"
	"html"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The error-page rule: what message an error body gives, for APIError.Message.

// maxMessage bounds APIError.Message, in bytes.
const maxMessage = 512

// errorMessage extracts a human message from an error body by its content type: the
// "message", "error", "detail" or "title" string of a JSON object; the <title> of an HTML page
// (its first <h1> when it has none), tags stripped, entities decoded, whitespace collapsed; the
// first non-empty line of a text body. A body of any other type gives "". The result is one
// line of valid UTF-8 of at most maxMessage bytes.
func errorMessage(contentType string, body []byte) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = ""
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return ""
	}
	if trimmed[0] == '{' && (mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "text/")) {
		if m, ok := jsonMessage(trimmed); ok || mt != "text/plain" {
			return m
		}
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || (mt == "" && trimmed[0] == '<'):
		return htmlMessage(trimmed)
	case mt == "" || strings.HasPrefix(mt, "text/"):
		return textMessage(trimmed)
	}
	return ""
}

// jsonMessage is the first non-empty string among "message", "error" (or error.message),
// "detail" and "title" (RFC 9457 problem details) of a JSON object; ok is false when body is
// not a JSON object.
func jsonMessage(body []byte) (msg string, ok bool) {
	var m struct {
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Title   json.RawMessage `json:"title"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	var nested struct {
		Message json.RawMessage `json:"message"`
	}
	if len(m.Error) > 0 && m.Error[0] == '{' {
		_ = json.Unmarshal(m.Error, &nested)
	}
	for _, raw := range []json.RawMessage{m.Message, m.Error, nested.Message, m.Detail, m.Title} {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s = collapseSpace(s); s != "" {
				return oneLine(s, maxMessage), true
			}
		}
	}
	return "", true
}

// htmlMessage is the text of an HTML page's <title>, or of its first <h1> when the title is
// missing or empty: what nginx, Apache and most proxies put their reason in.
func htmlMessage(page []byte) string {
	for _, tag := range []string{"title", "h1"} {
		if s := collapseSpace(html.UnescapeString(stripTags(elementText(page, tag)))); s != "" {
			return oneLine(s, maxMessage)
		}
	}
	return ""
}

// elementText returns the raw content of the first <tag ...>...</tag> of page (matched
// without regard to case), or "" when there is none. An element left open runs to the end.
func elementText(page []byte, tag string) string {
	open, end := "<"+tag, "</"+tag
	// ASCII only: bytes.ToLower can change a byte count (U+0130), and the offsets must hold.
	lower := make([]byte, len(page))
	for i, c := range page {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for from := 0; ; {
		i := bytes.Index(lower[from:], []byte(open))
		if i < 0 {
			return ""
		}
		i += from + len(open)
		// "<title>" or "<title lang=en>", not "<titlebar>".
		if i < len(lower) && lower[i] != '>' && lower[i] != ' ' && lower[i] != '\t' && lower[i] != '\r' && lower[i] != '\n' && lower[i] != '/' {
			from = i
			continue
		}
		gt := bytes.IndexByte(lower[i:], '>')
		if gt < 0 {
			return ""
		}
		start := i + gt + 1
		stop := bytes.Index(lower[start:], []byte(end))
		if stop < 0 {
			return string(page[start:])
		}
		return string(page[start : start+stop])
	}
}

// stripTags drops everything between '<' and '>' (an unclosed tag runs to the end).
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<':
			in = true
			b.WriteByte(' ')
		case c == '>' && in:
			in = false
		case !in:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// textMessage is the first line of a text body that holds more than white space.
func textMessage(body []byte) string {
	for len(body) > 0 {
		line := body
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if s := collapseSpace(string(line)); s != "" {
			return oneLine(s, maxMessage)
		}
	}
	return ""
}

// collapseSpace makes s valid UTF-8, trims it and turns every run of white space or control
// characters into one space.
func collapseSpace(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// oneLine flattens control characters to spaces and cuts s to at most n bytes, so a hostile
// body cannot forge extra log lines.
func oneLine(s string, n int) string {
	if len(s) > n {
		s = s[:n]
		for !utf8.ValidString(s) && len(s) > 0 {
			s = s[:len(s)-1]
		}
	}
	// A cut can end just after a space; the message must not end in one.
	return strings.TrimRightFunc(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s), unicode.IsSpace)
}
