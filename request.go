package labelprinter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/google/go-querystring/query"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// operation describes one call: everything do needs to send it and classify its failures.
type operation struct {
	name        string // "Labels.Get", for errors
	method      string
	path        string // escaped, relative to base, starting with "/": path + seg + tail
	seg         string // the escaped name, kept apart so the URL is built in one concatenation
	tail        string
	query       string // encoded, without "?"
	body        []byte // JSON or other in-memory body; empty means none, sent as Content-Length: 0
	stream      *streamBody
	contentType string
	accept      string
	class       retryClass
}

// urlPath is the path o requests, escaped and without the query, as errors and logs show it:
// /api/v3/labels/a%2Fb, or /printer7/api/v3/labels/a%2Fb for a base URL with a path.
func (c *Client) urlPath(o *operation) string { return c.basePath + o.path + o.seg + o.tail }

// setPrinterPath points o at suffix on printer, or at the single-printer path when printer is "".
func (o *operation) setPrinterPath(printer, suffix string) error {
	if printer == "" {
		o.path = suffix
		return nil
	}
	seg, err := escapeName(o.name, "printer", printer)
	if err != nil {
		return err
	}
	o.path, o.seg, o.tail = "/printers/", seg, suffix
	return nil
}

// streamBody is an upload body: rewindable ones are re-sent whole on a retry, others never.
type streamBody struct {
	open   retryablehttp.ReaderFunc
	length int64 // -1 when unknown
	once   *onceReader
}

// rewindable reports whether a retry could send the body again from its start.
func (s *streamBody) rewindable() bool { return s == nil || s.once == nil || !s.once.started.Load() }

// onceReader marks a plain reader as consumed on its first Read, so it is never re-sent. It
// has no Close, so retryablehttp's probe cannot close the caller's reader.
type onceReader struct {
	r       io.Reader
	started atomic.Bool
}

func (o *onceReader) Read(p []byte) (int, error) {
	o.started.Store(true)
	return o.r.Read(p)
}

// newStreamBody prepares body for upload with the length it will declare. An
// io.ReaderAt+io.Seeker (an *os.File, a bytes.Reader) gets a fresh SectionReader per attempt, so
// a retry never races the transport still reading the previous one; an io.Seeker is rewound;
// anything else is sent once. The length comes from seeking, from a Len() int method (a
// bytes.Buffer), or from declared (> 0); only when none of them tells is it unknown (-1) and
// the body goes out chunked, which small embedded HTTP servers often refuse.
func newStreamBody(body io.Reader, declared int64) (*streamBody, error) {
	rs, ok := body.(io.ReadSeeker)
	if !ok {
		length := int64(-1)
		if l, ok := body.(interface{ Len() int }); ok {
			length = int64(l.Len())
			if declared > 0 && declared != length {
				return nil, fmt.Errorf("%d bytes declared but the reader holds %d", declared, length)
			}
		} else if declared > 0 {
			length = declared
		}
		r := body
		if length >= 0 {
			r = &exactReader{r: body, declared: length, left: length}
		}
		o := &onceReader{r: r}
		return &streamBody{once: o, length: length, open: func() (io.Reader, error) {
			if o.started.Load() {
				return nil, errors.New("labelprinter: upload body cannot be rewound")
			}
			return o, nil
		}}, nil
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	end, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	size := end - start
	if declared > 0 && declared != size {
		return nil, fmt.Errorf("%d bytes declared but the reader holds %d", declared, size)
	}
	if ra, ok := body.(io.ReaderAt); ok {
		return &streamBody{length: size, open: func() (io.Reader, error) {
			return io.NewSectionReader(ra, start, size), nil
		}}, nil
	}
	return &streamBody{length: size, open: func() (io.Reader, error) {
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return nil, err
		}
		return struct{ io.Reader }{io.LimitReader(rs, size)}, nil
	}}, nil
}

// exactReader passes on exactly the declared number of bytes of a reader that cannot be
// measured, and fails instead of ending when the reader holds fewer or more. A failed read
// aborts the request and closes its connection, so the printer sees a body shorter than its
// Content-Length and never a complete request holding a truncated image. For the same reason
// the last byte is held back until the reader has been seen to end: net/http would otherwise
// send all declared bytes before noticing the surplus.
type exactReader struct {
	r        io.Reader
	declared int64
	left     int64 // bytes still to pass on
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if e.left > 1 {
		if int64(len(p)) > e.left-1 {
			p = p[:e.left-1]
		}
		n, err := e.r.Read(p)
		e.left -= int64(n)
		if err == io.EOF {
			err = e.short()
		}
		return n, err
	}
	var b [2]byte
	if _, err := io.ReadFull(e.r, b[:1]); err != nil {
		if err == io.EOF {
			err = e.short()
		}
		return 0, err
	}
	switch _, err := io.ReadFull(e.r, b[1:]); err {
	case nil:
		return 0, fmt.Errorf("labelprinter: upload body holds more than its %d declared bytes; it was not sent", e.declared)
	case io.EOF:
	default:
		return 0, err
	}
	p[0] = b[0]
	e.left = 0
	return 1, nil
}

func (e *exactReader) short() error {
	return fmt.Errorf("labelprinter: upload body ended after %d of its %d declared bytes; it was not sent whole", e.declared-e.left, e.declared)
}

// callState travels as the request's context, because retryablehttp's CheckRetry sees neither
// the request nor the attempt number. Being the context itself, instead of a value added with
// context.WithValue, saves an allocation per call.
type callState struct {
	context.Context
	op       operation // a copy, so the caller's operation can stay on its stack
	attempts int
	apiErr   *APIError // the last non-2xx answer, already read and closed
	waitErr  error     // the context error that interrupted a backoff
}

type callStateKey struct{}

// Value returns the callState itself for callStateKey and defers everything else to the parent.
func (s *callState) Value(key any) any {
	if key == (callStateKey{}) {
		return s
	}
	return s.Context.Value(key)
}

// send performs op with retries and returns the 2xx response with its body open. Every other
// outcome becomes an *APIError, *TransportError, *RedirectError or context error here.
func (c *Client) send(ctx context.Context, op *operation) (*http.Response, error) {
	if ctx == nil {
		return nil, invalidArg(op.name, "nil context")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := &callState{Context: ctx, op: *op}
	ctx = st

	target := c.base + op.path + op.seg + op.tail
	if op.query != "" {
		target = c.base + op.path + op.seg + op.tail + "?" + op.query
	}
	var raw any
	switch {
	case op.stream != nil:
		raw = op.stream.open
	case len(op.body) > 0:
		// An empty body is no body at all: net/http then declares Content-Length: 0 on a POST
		// or PUT, where an empty reader would make it stream a chunked body of zero bytes.
		raw = op.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, op.method, target, raw)
	if err != nil {
		return nil, invalidArg(op.name, "building request: %v", err)
	}
	h := req.Header
	if op.stream != nil {
		// -1 says "unknown, stream it chunked" without net/http probing the body first.
		req.ContentLength = op.stream.length
		if op.stream.length < 0 && c.protoMajor.Load() == 1 {
			// A server that refuses chunked bodies answers 411 and closes at once; waiting for
			// its go-ahead lets that answer arrive instead of a broken pipe mid-body. Only over
			// HTTP/1.x: an HTTP/2 server (nginx among them) need not answer the question, and
			// net/http would hold the body back for the whole ExpectContinueTimeout.
			h["Expect"] = expectContinue
		}
	}
	h["User-Agent"] = c.userAgent
	if op.accept != "" {
		h["Accept"] = headerValues(op.accept)
	}
	if op.contentType != "" {
		h["Content-Type"] = headerValues(op.contentType)
	}
	if c.authz != nil {
		h["Authorization"] = c.authz
	}
	for k, vs := range c.headers {
		h[k] = vs
	}
	// Enabled first: the path is redacted with the credentials of the moment, which may mean
	// reading files (WithRedactedValuesFunc), a cost a request whose line is not kept must not pay.
	if c.logger != nil && c.logger.Enabled(ctx, slog.LevelDebug) {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "labelprinter request", slog.String("method", op.method), slog.String("path", c.shownPath(c.redactorNow(), op)))
	}

	resp, err := c.rc.Do(req)
	if resp != nil && resp.ProtoMajor != 0 && int32(resp.ProtoMajor) != c.protoMajor.Load() {
		c.protoMajor.Store(int32(resp.ProtoMajor))
	}
	if st.waitErr != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if st.apiErr != nil {
			return nil, fmt.Errorf("%w (while waiting to retry after %w)", st.waitErr, st.apiErr)
		}
		return nil, st.waitErr
	}
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, c.transportError(op, st, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if st.apiErr == nil {
			st.apiErr = c.newAPIError(op, resp)
		}
		resp.Body.Close()
		st.apiErr.Attempts = st.attempts
		return nil, st.apiErr
	}
	return resp, nil
}

// sharedValues are header values used on every request, built once: net/http only reads them.
var sharedValues = map[string][]string{
	mediaJSON: {mediaJSON}, "*/*": {"*/*"},
	"image/png": {"image/png"}, "image/jpeg": {"image/jpeg"}, "image/tiff": {"image/tiff"},
}

var expectContinue = []string{"100-continue"}

func headerValues(v string) []string {
	if vs, ok := sharedValues[v]; ok {
		return vs
	}
	return []string{v}
}

// encodeQuery encodes an options struct with go-querystring; a nil pointer gives "".
func encodeQuery(op string, opts any) (string, error) {
	v, err := query.Values(opts)
	if err != nil {
		return "", invalidArg(op, "encoding options: %v", err)
	}
	return v.Encode(), nil
}

// jsonBody returns the bytes of a JSON request body: json.RawMessage and []byte verbatim (they
// must be valid JSON), anything else marshalled without HTML escaping.
func jsonBody(op string, v any) ([]byte, error) {
	switch b := v.(type) {
	case nil:
		return nil, invalidArg(op, "body is nil")
	case json.RawMessage:
		if !json.Valid(b) {
			return nil, invalidArg(op, "body is not valid JSON")
		}
		return b, nil
	case []byte:
		if !json.Valid(b) {
			return nil, invalidArg(op, "body is not valid JSON")
		}
		return b, nil
	}
	out, err := encodeJSON(v)
	if err != nil {
		return nil, invalidArg(op, "encoding body: %v", err)
	}
	if bytes.Equal(out, []byte("null")) {
		return nil, invalidArg(op, "body encodes to null")
	}
	return out, nil
}

// encodeJSON marshals v the way the SDK sends JSON: without HTML escaping, which only matters
// to browsers, and without the encoder's trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads a 2xx body up to the response cap into a pooled buffer; the caller returns it.
// The buffer grows with the bytes that arrive, never ahead of them: a declared Content-Length
// is the server's word, and a server that declares 60 MiB and sends 6 bytes must not cost 60
// MiB per pending call.
func (c *Client) readBody(op *operation, resp *http.Response) (*bytes.Buffer, error) {
	defer resp.Body.Close()
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	// One byte past the cap tells a body at the cap from a longer one; at math.MaxInt64 no
	// body can be longer, and the extra byte would overflow.
	limit := c.maxResponseBytes
	if limit < math.MaxInt64 {
		limit++
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, limit))
	if err == nil && n > c.maxResponseBytes {
		err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.maxResponseBytes)
	}
	if err != nil {
		putBuf(buf)
		if errors.Is(err, ErrResponseTooLarge) {
			return nil, c.newDecodeError(op, resp.StatusCode, "response", nil, err)
		}
		return nil, c.newTransportError(op, 1, true, err)
	}
	return buf, nil
}

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bufPool.Put(b)
	}
}

// doJSON sends op and decodes a documented response into v. An empty or null body is a
// *DecodeError: a zero value would be indistinguishable from real zeros. Every documented
// struct decodes itself, and calling its UnmarshalJSON directly instead of through
// json.Unmarshal scans the body once instead of twice.
func (c *Client) doJSON(ctx context.Context, op *operation, what string, v json.Unmarshaler) error {
	op.accept = mediaJSON
	resp, err := c.send(ctx, op)
	if err != nil {
		return err
	}
	buf, err := c.readBody(op, resp)
	if err != nil {
		return err
	}
	defer putBuf(buf)
	b := bytes.TrimSpace(buf.Bytes())
	switch {
	case len(b) == 0:
		err = errors.New("empty body")
	case bytes.Equal(b, []byte("null")):
		err = errors.New("null body")
	default:
		err = v.UnmarshalJSON(b)
	}
	if err != nil {
		return c.newDecodeError(op, resp.StatusCode, what, b, err)
	}
	return nil
}

// doRaw sends op and returns a body the contract does not describe as json.RawMessage: empty
// when the body is empty, otherwise valid JSON.
func (c *Client) doRaw(ctx context.Context, op *operation) (json.RawMessage, error) {
	op.accept = mediaJSON
	resp, err := c.send(ctx, op)
	if err != nil {
		return nil, err
	}
	buf, err := c.readBody(op, resp)
	if err != nil {
		return nil, err
	}
	defer putBuf(buf)
	return c.decodeRaw(op, resp.StatusCode, buf.Bytes())
}

// decodeRaw checks a body the contract does not describe and returns a copy of it.
func (c *Client) decodeRaw(op *operation, status int, body []byte) (json.RawMessage, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return json.RawMessage{}, nil
	}
	if !json.Valid(b) {
		return nil, c.newDecodeError(op, status, "JSON", b, errors.New("body is not valid JSON"))
	}
	return json.RawMessage(bytes.Clone(b)), nil
}

// doNoContent sends op and discards whatever 2xx body comes back.
func (c *Client) doNoContent(ctx context.Context, op *operation) error {
	op.accept = mediaJSON
	resp, err := c.send(ctx, op)
	if err != nil {
		return err
	}
	// Drain a little so the connection can be reused; a long body is cut by Close.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	return resp.Body.Close()
}

// doDictionary decodes a list response, a JSON object keyed by name.
func (c *Client) doDictionary(ctx context.Context, op *operation) (map[string]json.RawMessage, error) {
	op.accept = mediaJSON
	resp, err := c.send(ctx, op)
	if err != nil {
		return nil, err
	}
	buf, err := c.readBody(op, resp)
	if err != nil {
		return nil, err
	}
	defer putBuf(buf)
	return c.decodeDictionary(op, resp.StatusCode, buf.Bytes())
}

// decodeDictionary decodes a JSON object keyed by name; an empty body is an empty dictionary.
func (c *Client) decodeDictionary(op *operation, status int, body []byte) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return out, nil
	}
	err := json.Unmarshal(b, &out)
	if err == nil && out == nil {
		err = errors.New("null body")
	}
	if err != nil {
		return nil, c.newDecodeError(op, status, "dictionary", b, err)
	}
	return out, nil
}
