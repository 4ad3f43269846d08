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
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
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
	// printer before the failure, and by the *APIError of a PrintJob, DeselectJobs or Trigger
	// answered 500, 502 or 504 (a gateway that gave up waiting may still have forwarded it).
	// For those calls it means the label may have been selected or printed: check the counters
	// before sending it again.
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

	outcomeUnknown bool // the answer leaves open whether the printer acted (maybeActed)
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

// Is lets errors.Is match an *APIError against the status sentinels (ErrNotFound, ErrServer,
// ...), and against ErrOutcomeUnknown when a print request was answered 500, 502 or 504.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrOutcomeUnknown:
		return e.outcomeUnknown
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

	redactor *redactor // applied to Err's text, which the SDK does not write
}

// Error names the request and the cause, and says when the printer may have acted on it. No
// credential of the Client appears in it (see APIError).
func (e *TransportError) Error() string {
	s := e.Method + " " + e.Path + ": " + e.redactor.redactString(e.Err.Error())
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

	redactor *redactor // applied to Err's text, which may quote the body
}

// Error names the operation, the expected value and the decoder's complaint.
func (e *DecodeError) Error() string {
	s := e.Method + " " + e.Path + ": decoding " + e.What + ": " + e.redactor.redactString(e.Err.Error())
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
	// A cut can end just after a space; the message must not end in one.
	return strings.TrimRightFunc(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s), unicode.IsSpace)
}

func (c *Client) transportError(op *operation, st *callState, err error) error {
	var re *RedirectError
	if errors.As(err, &re) {
		r := c.redactorNow()
		return &RedirectError{
			Method:     re.Method,
			Path:       r.redactString(re.Path),
			StatusCode: re.StatusCode,
			Location:   r.redactString(re.Location),
		}
	}
	return c.newTransportError(op, max(st.attempts, 1), !isDialError(err), err)
}

// newTransportError builds every TransportError, so each redacts its cause.
func (c *Client) newTransportError(op *operation, attempts int, maybeSent bool, err error) *TransportError {
	r := c.redactorNow()
	return &TransportError{
		Method:    op.method,
		Path:      c.shownPath(r, op),
		Attempts:  attempts,
		MaybeSent: maybeSent,
		Err:       err,
		redactor:  r,
	}
}

// redactorNow is the redactor an error or a log line being built now uses: the Client's, or,
// with WithRedactedValuesFunc, one that also holds the values those functions give now. It is
// built per error rather than per request, as errors are rare and a request that succeeds
// must not pay for reading a rotating credential.
func (c *Client) redactorNow() *redactor {
	if len(c.redactedFunc) == 0 {
		return c.redactor
	}
	secrets := slices.Clone(c.secrets)
	for _, f := range c.redactedFunc {
		secrets = append(secrets, f()...)
	}
	return newRedactor(secrets)
}

// shownPath is the request path as errors and log lines show it, credentials removed by r (a
// name could hold one).
func (c *Client) shownPath(r *redactor, op *operation) string {
	return r.redactString(c.urlPath(op))
}

// newAPIError reads at most 64 KiB of a non-2xx body, with credentials removed, and closes it.
func (c *Client) newAPIError(op *operation, resp *http.Response) *APIError {
	r := c.redactorNow()
	body := r.readCut(resp.Body, maxErrorBody)
	resp.Body.Close()
	e := &APIError{
		StatusCode: resp.StatusCode,
		Method:     op.method,
		Path:       c.shownPath(r, op),
		Body:       body,
		Message:    r.redactString(errorMessage(resp.Header.Get("Content-Type"), body)),
		// The one rule of which answers leave a print's outcome open lives in retry.go.
		outcomeUnknown: maybeActed(op.class, resp.StatusCode),
	}
	if d, ok := parseRetryAfter(resp.Header.Values("Retry-After"), time.Now()); ok {
		e.RetryAfter = d
	}
	return e
}

// newDecodeError builds every DecodeError, with a redacted sample of body.
func (c *Client) newDecodeError(op *operation, status int, what string, body []byte, err error) *DecodeError {
	r := c.redactorNow()
	e := &DecodeError{Method: op.method, Path: c.shownPath(r, op), StatusCode: status, What: what, Err: err, redactor: r}
	if len(body) > 0 {
		e.Snippet = snippet(r, body)
	}
	return e
}

// snippet is the DecodeError sample of a body: one line of at most 256 bytes, credentials
// removed by r before the cut (so none survives minus its end) and after the flattening.
func snippet(r *redactor, b []byte) string {
	const n = 256
	if r != nil {
		// Only the head is shown, so only the head (and what a credential straddling the cut
		// may take) is searched: a body can be as large as WithMaxResponseBytes allows.
		b = b[:min(len(b), n+r.slack)]
	}
	return r.redactString(oneLine(string(r.redact(b)), n))
}

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
