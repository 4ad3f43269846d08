package labelprinter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors. Match them with errors.Is; an *APIError matches the one of its status.
var (
	// ErrInvalidArgument is wrapped by every error the SDK returns before sending anything:
	// an empty or unsafe name, an incomplete selection, an impossible range, a bad option.
	ErrInvalidArgument = errors.New("labelprinter: invalid argument")

	// ErrNotFound is matched by an *APIError with status 404.
	ErrNotFound = errors.New("labelprinter: not found")
	// ErrUnauthorized is matched by an *APIError with status 401.
	ErrUnauthorized = errors.New("labelprinter: unauthorized")
	// ErrForbidden is matched by an *APIError with status 403.
	ErrForbidden = errors.New("labelprinter: forbidden")
	// ErrConflict is matched by an *APIError with status 409.
	ErrConflict = errors.New("labelprinter: conflict")
	// ErrRateLimited is matched by an *APIError with status 429.
	ErrRateLimited = errors.New("labelprinter: rate limited")
	// ErrServer is matched by an *APIError with any 5xx status.
	ErrServer = errors.New("labelprinter: printer error")

	// ErrImageFailed is wrapped by Images.WaitReady when the printer reports the image in state ERROR.
	ErrImageFailed = errors.New("labelprinter: image processing failed")

	// ErrOutcomeUnknown is matched by a *TransportError when the request may have reached the
	// printer before the failure. For PrintJob and Trigger it means the label may have been
	// selected or printed: check the counters before sending it again.
	ErrOutcomeUnknown = errors.New("labelprinter: request may have reached the printer")

	// ErrResponseTooLarge is wrapped when a JSON response exceeds the WithMaxResponseBytes limit.
	ErrResponseTooLarge = errors.New("labelprinter: response body too large")
)

// maxErrorBody bounds how much of an error response is kept in APIError.Body.
const maxErrorBody = 64 << 10

// APIError is returned for any response with a status outside 2xx. It keeps the status, the
// request line and at most 64 KiB of the body, with credentials removed.
type APIError struct {
	// StatusCode is the HTTP status the printer (or a proxy in front of it) answered.
	StatusCode int
	// Method is the request's HTTP method.
	Method string
	// Path is the request's escaped path, without the query.
	Path string
	// Body holds at most the first 64 KiB of the response body.
	Body []byte
	// Message is the reason the body gives, on one line of at most 512 bytes: the "message",
	// "error", "detail" or "title" string of a JSON body; the <title> of an HTML page (a
	// proxy's error page), tags stripped and white space collapsed; the first non-empty line
	// of a text body. Empty when the body gives none.
	Message string
	// RetryAfter is the wait the printer asked for with Retry-After, if it sent one.
	RetryAfter time.Duration
	// Attempts is the number of requests sent for this call, retries included.
	Attempts int
}

// Error reads like "PUT /api/v3/images/logo: 415 Unsupported Media Type: <message>".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if text := http.StatusText(e.StatusCode); text != "" {
		b.WriteByte(' ')
		b.WriteString(text)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Is lets errors.Is match an *APIError against the status sentinels (ErrNotFound, ErrServer, ...).
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode <= 599
	}
	return false
}

// TransportError is returned when no HTTP response was received: the connection failed, was
// reset, timed out or the context ended. Unwrap reaches the net/http error.
type TransportError struct {
	// Method and Path identify the request, as in APIError.
	Method string
	Path   string
	// Attempts is the number of requests tried for this call.
	Attempts int
	// MaybeSent is false only when the request provably never left this machine (the
	// connection could not be made).
	MaybeSent bool
	// Err is the error net/http returned.
	Err error
}

// Error names the request and the cause, and says when the printer may have acted on it.
func (e *TransportError) Error() string {
	s := e.Method + " " + e.Path + ": " + e.Err.Error()
	if e.Attempts > 1 {
		s += " (after " + strconv.Itoa(e.Attempts) + " attempts)"
	}
	return s
}

// Unwrap returns the underlying transport error, so context and net errors stay reachable.
func (e *TransportError) Unwrap() error { return e.Err }

// Is matches ErrOutcomeUnknown when the request may have reached the printer.
func (e *TransportError) Is(target error) bool {
	return target == ErrOutcomeUnknown && e.MaybeSent
}

// DecodeError is returned when a 2xx response does not hold what the operation documents. It
// keeps the status and a short sample of the body.
type DecodeError struct {
	// Method and Path identify the request, as in APIError.
	Method string
	Path   string
	// StatusCode is the 2xx status the body came with.
	StatusCode int
	// What names the value being decoded, such as "PrintCounters".
	What string
	// Snippet holds at most 256 bytes of the body, on one line.
	Snippet string
	// Err is the decoder's error, or ErrResponseTooLarge.
	Err error
}

// Error names the operation, the expected value and the decoder's complaint.
func (e *DecodeError) Error() string {
	s := e.Method + " " + e.Path + ": decoding " + e.What + ": " + e.Err.Error()
	if e.Snippet != "" {
		s += " (body: " + strconv.Quote(e.Snippet) + ")"
	}
	return s
}

// Unwrap returns the JSON error (or ErrResponseTooLarge).
func (e *DecodeError) Unwrap() error { return e.Err }

// RedirectError is returned when the printer answers with a redirect the SDK refuses to follow:
// any redirect of a POST, PUT or DELETE, and any redirect of a GET to another scheme, host or
// port. Following them could turn a print job into a GET or send credentials elsewhere.
type RedirectError struct {
	// Method and Path identify the request, as in APIError.
	Method string
	Path   string
	// StatusCode is the redirect status (301, 302, 303, 307, 308).
	StatusCode int
	// Location is the redirect target without its query and fragment.
	Location string
}

// Error says which request was redirected where.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s %s: refused redirect (%d) to %s", e.Method, e.Path, e.StatusCode, e.Location)
}

// invalidArg builds an error wrapping ErrInvalidArgument for op (such as "Labels.Get").
func invalidArg(op, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, op, fmt.Sprintf(format, args...))
}

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
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func (c *Client) transportError(op *operation, st *callState, err error) error {
	var re *RedirectError
	if errors.As(err, &re) {
		return re
	}
	attempts := st.attempts
	if attempts == 0 {
		attempts = 1
	}
	return &TransportError{
		Method:    op.method,
		Path:      c.urlPath(op),
		Attempts:  attempts,
		MaybeSent: !isDialError(err),
		Err:       err,
	}
}

// newAPIError reads at most 64 KiB of a non-2xx body and closes it.
func (c *Client) newAPIError(op *operation, resp *http.Response) *APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	body = c.redact(body)
	e := &APIError{
		StatusCode: resp.StatusCode,
		Method:     op.method,
		Path:       c.urlPath(op),
		Body:       body,
		Message:    errorMessage(resp.Header.Get("Content-Type"), body),
	}
	if d, ok := parseRetryAfter(resp.Header.Values("Retry-After"), time.Now()); ok {
		e.RetryAfter = d
	}
	return e
}

// redact removes every configured credential from b, for servers that echo request headers.
func (c *Client) redact(b []byte) []byte {
	for _, s := range c.secrets {
		if len(s) >= 4 && bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte("[REDACTED]"))
		}
	}
	return b
}
