package labelprinter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// Message is the "message" or "error" string of a JSON error body, or a short text body.
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

// errorMessage extracts a human message from an error body: the "message" or "error" string of
// a JSON object, or a short text body flattened to one line.
func errorMessage(body []byte) string {
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return ""
	}
	if trimmed[0] == '{' {
		var m struct {
			Message json.RawMessage `json:"message"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil {
			for _, raw := range []json.RawMessage{m.Message, m.Error} {
				var s string
				if json.Unmarshal(raw, &s) == nil && s != "" {
					return oneLine(s, 512)
				}
			}
		}
		return ""
	}
	if trimmed[0] == '<' || len(trimmed) > 512 || !utf8.ValidString(trimmed) {
		return ""
	}
	return oneLine(trimmed, 512)
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
		Path:      op.urlPath(),
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
		Path:       op.urlPath(),
		Body:       body,
		Message:    errorMessage(body),
		// The one rule of which answers leave a print's outcome open lives in retry.go.
		outcomeUnknown: maybeActed(op.class, resp.StatusCode),
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
