package labelprinter

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
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
