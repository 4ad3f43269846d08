package labelprinter

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-querystring/query"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

const (
	defaultUserAgent        = "go-labelprinter/" + Version
	defaultMaxResponseBytes = 64 << 20
	defaultPollInterval     = 200 * time.Millisecond
	apiPrefix               = "/api/v3"
	mediaJSON               = "application/json"
)

// Client talks to one printer's HTTP control service (API v3). Create it with NewClient; one
// Client is safe for concurrent use and should be reused, since it keeps connections alive.
type Client struct {
	// Labels manages the labels stored on the printer.
	Labels *LabelsService
	// Images manages the images labels refer to.
	Images *ImagesService
	// Tables manages the data tables labels are selected and filled from.
	Tables *TablesService
	// Printers selects, triggers and aborts print jobs and reads counters and history.
	Printers *PrintersService

	common service

	base      string // scheme://host[:port][/prefix]/api/v3, no trailing slash
	rc        *retryablehttp.Client
	transport http.RoundTripper // the caller's or our own, for Close

	userAgent []string
	authz     []string
	headers   http.Header
	secrets   []string

	policy           RetryPolicy
	budget           *retryBudget
	logger           *slog.Logger
	maxResponseBytes int64
	pollInterval     time.Duration

	// jitter and sleep are replaced by tests for deterministic waits.
	jitter func() float64
	sleep  func(ctx context.Context, d time.Duration) error
}

// service is shared by all service types, so wiring them costs one allocation.
type service struct{ client *Client }

// RetryPolicy bounds how calls are retried. Zero fields take the defaults; MaxAttempts 1
// turns retries off. Whatever the policy, PrintJob and Trigger are retried only when the
// connection could not be made, since a label printed twice is worse than an error.
type RetryPolicy struct {
	// MaxAttempts is the number of requests per call, the first included (default 4).
	MaxAttempts int
	// MinWait is the backoff base: retry n waits a uniform random time in
	// [0, min(MaxWait, MinWait·2^n)] (default 100 ms).
	MinWait time.Duration
	// MaxWait caps the computed backoff (default 2 s).
	MaxWait time.Duration
	// MaxRetryAfter is the longest Retry-After the SDK will wait; a longer one ends the call at
	// once with the printer's *APIError (default 30 s).
	MaxRetryAfter time.Duration
	// Budget is the size of the Client's retry budget, in tokens: a retry costs 5 (10 after a
	// timeout) and a success refunds 1, so a dead printer is not hammered by every goroutine
	// at once (default 100).
	Budget int
}

// DefaultRetryPolicy returns the policy a Client uses unless WithRetry says otherwise.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:   4,
		MinWait:       100 * time.Millisecond,
		MaxWait:       2 * time.Second,
		MaxRetryAfter: 30 * time.Second,
		Budget:        100,
	}
}

// Option configures a Client in NewClient. Every option validates its argument, and NewClient
// returns the first error.
type Option func(*clientOptions) error

type clientOptions struct {
	httpClient   *http.Client
	tlsConfig    *tls.Config
	bearer       secret
	basicUser    string
	basicPass    secret
	hasBasic     bool
	headers      http.Header
	userAgent    string
	policy       RetryPolicy
	logger       *slog.Logger
	maxResponse  int64
	pollInterval time.Duration
}

// secret keeps a credential out of every %v, %+v, %#v and slog rendering of a value that holds it.
type secret string

func (secret) String() string               { return "[REDACTED]" }
func (secret) GoString() string             { return `"[REDACTED]"` }
func (secret) LogValue() slog.Value         { return slog.StringValue("[REDACTED]") }
func (s secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// WithHTTPClient makes the Client send through a copy of hc (its Transport, Timeout, Jar). The
// SDK's redirect rules are applied in front of hc's own CheckRedirect, and hc is never modified.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *clientOptions) error {
		if hc == nil {
			return invalidArg("WithHTTPClient", "client is nil")
		}
		o.httpClient = hc
		return nil
	}
}

// WithTLSConfig sets the TLS configuration for HTTPS printers: a custom CA pool for self-signed
// printers, client certificates for mutual TLS. The config is cloned.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(o *clientOptions) error {
		if cfg == nil {
			return invalidArg("WithTLSConfig", "config is nil")
		}
		o.tlsConfig = cfg.Clone()
		return nil
	}
}

// WithBearerToken sends "Authorization: Bearer <token>" with every request.
func WithBearerToken(token string) Option {
	return func(o *clientOptions) error {
		if token == "" {
			return invalidArg("WithBearerToken", "token is empty")
		}
		if !validHeaderValue(token) {
			return invalidArg("WithBearerToken", "token contains characters not allowed in a header")
		}
		o.bearer = secret(token)
		return nil
	}
}

// WithBasicAuth sends HTTP basic credentials with every request.
func WithBasicAuth(username, password string) Option {
	return func(o *clientOptions) error {
		if username == "" {
			return invalidArg("WithBasicAuth", "username is empty")
		}
		if strings.Contains(username, ":") {
			return invalidArg("WithBasicAuth", "username contains ':'")
		}
		o.basicUser, o.basicPass, o.hasBasic = username, secret(password), true
		return nil
	}
}

// WithHeader adds a header to every request, such as an API key a proxy in front of the printer
// requires. Its value is treated as a credential and never logged or put in an error.
func WithHeader(key, value string) Option {
	return func(o *clientOptions) error {
		if !validHeaderName(key) {
			return invalidArg("WithHeader", "invalid header name %q", key)
		}
		if !validHeaderValue(value) {
			return invalidArg("WithHeader", "header %s: value contains characters not allowed in a header", key)
		}
		canon := http.CanonicalHeaderKey(key)
		switch canon {
		case "Idempotency-Key", "X-Idempotency-Key":
			// net/http treats these as permission to replay a POST on its own, which could print twice.
			return invalidArg("WithHeader", "%s would let net/http replay print requests", canon)
		case "Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection":
			return invalidArg("WithHeader", "%s is set by the SDK", canon)
		}
		if o.headers == nil {
			o.headers = http.Header{}
		}
		o.headers[canon] = append(o.headers[canon], value)
		return nil
	}
}

// WithUserAgent puts ua in front of the SDK's own User-Agent, so the printer's logs still show
// the SDK version.
func WithUserAgent(ua string) Option {
	return func(o *clientOptions) error {
		if strings.TrimSpace(ua) == "" || !validHeaderValue(ua) {
			return invalidArg("WithUserAgent", "invalid user agent %q", ua)
		}
		o.userAgent = ua
		return nil
	}
}

// WithRetry replaces the retry policy. Zero fields keep the defaults; negative ones are an error.
func WithRetry(p RetryPolicy) Option {
	return func(o *clientOptions) error {
		if p.MaxAttempts < 0 || p.MinWait < 0 || p.MaxWait < 0 || p.MaxRetryAfter < 0 || p.Budget < 0 {
			return invalidArg("WithRetry", "negative field in %+v", p)
		}
		if p.MinWait > 0 && p.MaxWait > 0 && p.MinWait > p.MaxWait {
			return invalidArg("WithRetry", "MinWait %v is above MaxWait %v", p.MinWait, p.MaxWait)
		}
		d := DefaultRetryPolicy()
		if p.MaxAttempts == 0 {
			p.MaxAttempts = d.MaxAttempts
		}
		if p.MinWait == 0 {
			p.MinWait = d.MinWait
		}
		if p.MaxWait == 0 {
			p.MaxWait = max(d.MaxWait, p.MinWait)
		}
		if p.MaxRetryAfter == 0 {
			p.MaxRetryAfter = d.MaxRetryAfter
		}
		if p.Budget == 0 {
			p.Budget = d.Budget
		}
		o.policy = p
		return nil
	}
}

// WithLogger logs each request and retry at debug level to l. Nothing is logged without it,
// and no credential is ever logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *clientOptions) error {
		if l == nil {
			return invalidArg("WithLogger", "logger is nil")
		}
		o.logger = l
		return nil
	}
}

// WithMaxResponseBytes caps JSON response bodies, counted after decompression (default 64 MiB).
// Image downloads stream to the caller's writer and are not capped.
func WithMaxResponseBytes(n int64) Option {
	return func(o *clientOptions) error {
		if n <= 0 {
			return invalidArg("WithMaxResponseBytes", "limit must be positive, got %d", n)
		}
		o.maxResponse = n
		return nil
	}
}

// WithPollInterval sets the first wait between two polls of Images.WaitReady (default 200 ms);
// later waits grow up to 2 s.
func WithPollInterval(d time.Duration) Option {
	return func(o *clientOptions) error {
		if d <= 0 {
			return invalidArg("WithPollInterval", "interval must be positive, got %v", d)
		}
		o.pollInterval = d
		return nil
	}
}

// NewClient returns a Client for the printer at baseURL, "http://host[:port][/prefix]"; the
// "/api/v3" segment is appended unless it is already there. It reads no environment variable
// (the default transport honours the standard proxy variables, as net/http's does) and
// touches no network.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	o := clientOptions{policy: DefaultRetryPolicy(), maxResponse: defaultMaxResponseBytes, pollInterval: defaultPollInterval}
	for _, opt := range opts {
		if opt == nil {
			return nil, invalidArg("NewClient", "nil option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}

	c := &Client{
		base:             base,
		policy:           o.policy,
		budget:           newRetryBudget(o.policy.Budget),
		logger:           o.logger,
		maxResponseBytes: o.maxResponse,
		pollInterval:     o.pollInterval,
		jitter:           rand.Float64,
		sleep:            sleepCtx,
		headers:          o.headers,
	}
	ua := defaultUserAgent
	if o.userAgent != "" {
		ua = o.userAgent + " " + defaultUserAgent
	}
	c.userAgent = []string{ua}

	auths := 0
	if o.bearer != "" {
		auths++
		c.authz = []string{"Bearer " + string(o.bearer)}
		c.secrets = append(c.secrets, string(o.bearer))
	}
	if o.hasBasic {
		auths++
		enc := base64.StdEncoding.EncodeToString([]byte(o.basicUser + ":" + string(o.basicPass)))
		c.authz = []string{"Basic " + enc}
		c.secrets = append(c.secrets, enc)
		if o.basicPass != "" {
			c.secrets = append(c.secrets, string(o.basicPass))
		}
	}
	if _, ok := o.headers["Authorization"]; ok {
		auths++
	}
	if auths > 1 {
		return nil, invalidArg("NewClient", "more than one option sets the Authorization header")
	}
	for _, vs := range o.headers {
		for _, v := range vs {
			if v != "" {
				c.secrets = append(c.secrets, v)
			}
		}
	}

	hc, err := buildHTTPClient(o.httpClient, o.tlsConfig)
	if err != nil {
		return nil, err
	}
	c.transport = hc.Transport
	// retryablehttp empties the idle pool on every failed call; hiding CloseIdleConnections keeps
	// one failing goroutine from costing every other caller its warm connection.
	hc.Transport = keepIdle{hc.Transport}
	c.rc = &retryablehttp.Client{
		HTTPClient: hc,
		Logger:     nil,
		// Our CheckRetry counts attempts and stops first; RetryMax is only a backstop.
		RetryMax:     o.policy.MaxAttempts,
		CheckRetry:   c.checkRetry,
		Backoff:      func(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 },
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}

	c.common.client = c
	c.Labels = (*LabelsService)(&c.common)
	c.Images = (*ImagesService)(&c.common)
	c.Tables = (*TablesService)(&c.common)
	c.Printers = (*PrintersService)(&c.common)
	return c, nil
}

// String describes the Client by its base URL only, so printing a Client with %v or %+v never
// shows a credential (fmt cannot call the redacting methods of unexported fields).
func (c Client) String() string { return "labelprinter.Client(" + c.base + ")" }

// GoString is String for %#v, for the same reason.
func (c Client) GoString() string { return c.String() }

// BaseURL returns the URL every request path is appended to, ending in "/api/v3".
func (c *Client) BaseURL() string { return c.base }

// Close releases the Client's idle keep-alive connections. Calls made after Close still work;
// they open new connections.
func (c *Client) Close() error {
	if ci, ok := c.transport.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
	return nil
}

// keepIdle forwards requests but not CloseIdleConnections (see NewClient).
type keepIdle struct{ rt http.RoundTripper }

func (k keepIdle) RoundTrip(r *http.Request) (*http.Response, error) { return k.rt.RoundTrip(r) }

// DefaultTransport returns a new transport with the SDK's defaults: keep-alive with at most 64
// connections per printer, all of which may stay idle (so a burst never dials connections only to
// throw them away, and a small printer is never flooded), a 5 s dial timeout, a 30 s response-header timeout, TLS 1.2 or newer
// with verification on, the standard proxy variables, and no overall timeout.
func DefaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    64,
		MaxConnsPerHost:        64,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
	}
}

func buildHTTPClient(user *http.Client, tlsCfg *tls.Config) (*http.Client, error) {
	var hc http.Client
	if user != nil {
		hc = *user
	}
	rt := hc.Transport
	switch t := rt.(type) {
	case nil:
		tr := DefaultTransport()
		if tlsCfg != nil {
			tr.TLSClientConfig = tlsCfg
		}
		rt = tr
	case *http.Transport:
		if tlsCfg != nil {
			tr := t.Clone()
			tr.TLSClientConfig = tlsCfg
			rt = tr
		}
	default:
		if tlsCfg != nil {
			return nil, invalidArg("WithTLSConfig", "the HTTP client's transport is a %T, not an *http.Transport", rt)
		}
	}
	hc.Transport = rt
	userRedirect := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkRedirect(req, via); err != nil {
			return err
		}
		if userRedirect != nil {
			return userRedirect(req, via)
		}
		return nil
	}
	return &hc, nil
}

// checkRedirect is the one redirect rule: only a GET follows, only to the same scheme, host and
// port, and at most 3 times. net/http would turn a redirected print job into a GET and report
// success, and would send a custom auth header to any host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	code := 0
	if req.Response != nil {
		code = req.Response.StatusCode
	}
	refuse := first.Method != http.MethodGet ||
		req.URL.Scheme != first.URL.Scheme ||
		!strings.EqualFold(req.URL.Host, first.URL.Host) ||
		len(via) > 3
	if !refuse {
		return nil
	}
	loc := url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path}
	return &RedirectError{Method: first.Method, Path: first.URL.EscapedPath(), StatusCode: code, Location: loc.String()}
}

// parseBaseURL validates the printer address and returns it with the /api/v3 prefix.
func parseBaseURL(raw string) (string, error) {
	const op = "NewClient"
	if raw == "" {
		return "", invalidArg(op, "base URL is empty")
	}
	if strings.TrimSpace(raw) != raw {
		return "", invalidArg(op, "base URL has surrounding spaces")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error would repeat the raw URL, which may hold a password.
		return "", invalidArg(op, "base URL does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", invalidArg(op, "base URL must start with http:// or https://")
	}
	if u.User != nil {
		return "", invalidArg(op, "base URL must not hold credentials; use WithBasicAuth or WithBearerToken")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return "", invalidArg(op, "base URL %q has no host", u.Redacted())
	}
	if u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#") {
		return "", invalidArg(op, "base URL %q must not have a query or fragment", u.Redacted())
	}
	if u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
			return "", invalidArg(op, "base URL has an invalid port %q", u.Port())
		}
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	if !strings.HasSuffix(path, apiPrefix) {
		path += apiPrefix
	}
	// URL.String re-escapes the host, which keeps an IPv6 zone ("%25eth0") parsable.
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() + path, nil
}

// escapeName checks a label, image, table or printer name and returns it escaped as exactly one
// path segment. This is the one place names reach a URL.
func escapeName(op, what, name string) (string, error) {
	switch name {
	case "":
		return "", invalidArg(op, "%s name is empty", what)
	case ".", "..":
		return "", invalidArg(op, "%s name %q would change the path", what, name)
	}
	if !utf8.ValidString(name) {
		return "", invalidArg(op, "%s name is not valid UTF-8", what)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "", invalidArg(op, "%s name %q contains a control character", what, name)
		}
	}
	return url.PathEscape(name), nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// retryClass says which failures of an operation may be retried.
type retryClass uint8

const (
	// idempotent calls (GET, PUT, DELETE, abortPrint) retry connection errors and 408/429/5xx.
	idempotent retryClass = iota
	// printOnce calls (printJob, trigger) retry only when the connection could not be made.
	printOnce
)

// operation describes one call: everything do needs to send it and classify its failures.
type operation struct {
	name        string // "Labels.Get", for errors
	method      string
	path        string // escaped, relative to base, starting with "/": path + seg + tail
	seg         string // the escaped name, kept apart so the URL is built in one concatenation
	tail        string
	query       string // encoded, without "?"
	body        []byte // JSON or other in-memory body; nil means none
	hasBody     bool   // send body even when empty (printJob deselect)
	stream      *streamBody
	contentType string
	accept      string
	class       retryClass
}

// urlPath is the request path as errors and logs show it, such as /api/v3/labels/a%2Fb.
func (o *operation) urlPath() string { return apiPrefix + o.path + o.seg + o.tail }

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

// newStreamBody prepares body for upload: an io.ReaderAt+io.Seeker (an *os.File, a
// bytes.Reader) gets a fresh SectionReader per attempt, so a retry never races the transport
// still reading the previous one; an io.Seeker is rewound; anything else is sent once.
func newStreamBody(body io.Reader) (*streamBody, error) {
	rs, ok := body.(io.ReadSeeker)
	if !ok {
		o := &onceReader{r: body}
		return &streamBody{once: o, length: -1, open: func() (io.Reader, error) {
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
	case op.body != nil || op.hasBody:
		raw = op.body
		if raw.([]byte) == nil {
			raw = []byte{}
		}
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, op.method, target, raw)
	if err != nil {
		return nil, invalidArg(op.name, "building request: %v", err)
	}
	if op.stream != nil {
		// -1 says "unknown, stream it chunked" without net/http probing the body first.
		req.ContentLength = op.stream.length
	}
	h := req.Header
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
	if c.logger != nil {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "labelprinter request", slog.String("method", op.method), slog.String("path", op.urlPath()))
	}

	resp, err := c.rc.Do(req)
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

func headerValues(v string) []string {
	if vs, ok := sharedValues[v]; ok {
		return vs
	}
	return []string{v}
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

// checkRetry is the one retry rule. It is installed as retryablehttp's CheckRetry and waits
// itself, so it can honour the context deadline and the Retry-After cap exactly.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	if st == nil {
		return false, nil
	}
	st.attempts++
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		c.budget.refund()
		return false, nil
	}
	if ctx.Err() != nil {
		return false, nil
	}
	op := &st.op
	var (
		retryAfter    time.Duration
		hasRetryAfter bool
		reason        string
		cost          = retryCost
	)
	if err != nil {
		if !retryableError(op.class, err) {
			return false, nil
		}
		if isTimeout(err) {
			cost = timeoutRetryCost
		}
		reason = "transport error"
	} else {
		st.apiErr = c.newAPIError(op, resp)
		st.apiErr.Attempts = st.attempts
		if op.class != idempotent || !retryableStatus(resp.StatusCode) {
			return false, nil
		}
		retryAfter, hasRetryAfter = parseRetryAfter(resp.Header.Values("Retry-After"), time.Now())
		reason = "status " + strconv.Itoa(resp.StatusCode)
	}
	if !op.stream.rewindable() || st.attempts >= c.policy.MaxAttempts {
		return false, nil
	}
	wait := c.backoff(st.attempts - 1)
	if hasRetryAfter {
		if retryAfter > c.policy.MaxRetryAfter {
			return false, nil
		}
		wait = retryAfter
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return false, nil
	}
	if !c.budget.take(cost) {
		return false, nil
	}
	if c.logger != nil {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "labelprinter retry",
			slog.String("method", op.method), slog.String("path", op.urlPath()),
			slog.Int("attempt", st.attempts), slog.String("reason", reason), slog.Duration("wait", wait))
	}
	if err := c.sleep(ctx, wait); err != nil {
		st.waitErr = err
		return false, nil
	}
	st.apiErr = nil
	return true, nil
}

// backoff is full jitter: uniform in [0, min(MaxWait, MinWait·2^retry)].
func (c *Client) backoff(retry int) time.Duration {
	ceiling := c.policy.MaxWait
	if retry < 62 {
		if d := c.policy.MinWait << uint(retry); d > 0 && d < ceiling && d>>uint(retry) == c.policy.MinWait {
			ceiling = d
		}
	}
	return time.Duration(c.jitter() * float64(ceiling))
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryableError classifies a transport error: never a certificate error or a refused
// redirect; for print-once calls only a failed dial. The caller's context is checked before
// this: net/http's own timeouts also match context.DeadlineExceeded, and they are retryable.
func retryableError(class retryClass, err error) bool {
	var (
		re   *RedirectError
		cve  *tls.CertificateVerificationError
		uae  x509.UnknownAuthorityError
		he   x509.HostnameError
		cie  x509.CertificateInvalidError
		ae   tls.AlertError
		rhe  tls.RecordHeaderError
		dnse *net.DNSError
	)
	if errors.As(err, &re) || errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &he) ||
		errors.As(err, &cie) || errors.As(err, &ae) || errors.As(err, &rhe) {
		return false
	}
	if errors.As(err, &dnse) && dnse.IsNotFound {
		return false
	}
	// A TLS alert from the printer (it refused our certificate) will not change on a retry.
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" {
		return false
	}
	if class == printOnce {
		return isDialError(err)
	}
	return true
}

// isDialError reports whether err proves the request never left this machine.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// parseRetryAfter reads the first Retry-After value: whole seconds or an HTTP date. Values too
// large for a Duration saturate instead of overflowing.
func parseRetryAfter(values []string, now time.Time) (time.Duration, bool) {
	if len(values) == 0 {
		return 0, false
	}
	v := strings.TrimSpace(values[0])
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return time.Duration(math.MaxInt64), true
			}
			return 0, false
		}
		if n > uint64(math.MaxInt64/int64(time.Second)) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

const (
	retryCost        = 5
	timeoutRetryCost = 10
)

// retryBudget is a token bucket shared by every call of a Client: retries spend tokens and
// successes earn one back, so a dead printer stops being retried by everyone at once. It is
// lock-free because every successful call refunds: with a full bucket, the usual state, a
// refund is one atomic load and concurrent callers never write the shared cache line.
type retryBudget struct {
	tokens   atomic.Int64
	capacity int64
}

func newRetryBudget(capacity int) *retryBudget {
	b := &retryBudget{capacity: int64(capacity)}
	b.tokens.Store(int64(capacity))
	return b
}

func (b *retryBudget) take(cost int) bool {
	for {
		t := b.tokens.Load()
		if t < int64(cost) {
			return false
		}
		if b.tokens.CompareAndSwap(t, t-int64(cost)) {
			return true
		}
	}
}

func (b *retryBudget) refund() {
	for {
		t := b.tokens.Load()
		if t >= b.capacity || b.tokens.CompareAndSwap(t, t+1) {
			return
		}
	}
}

func (b *retryBudget) available() int { return int(b.tokens.Load()) }

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
func (c *Client) readBody(op *operation, resp *http.Response) (*bytes.Buffer, error) {
	defer resp.Body.Close()
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	if resp.ContentLength > 0 && resp.ContentLength <= c.maxResponseBytes {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, c.maxResponseBytes+1))
	if err == nil && n > c.maxResponseBytes {
		err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.maxResponseBytes)
	}
	if err != nil {
		putBuf(buf)
		if errors.Is(err, ErrResponseTooLarge) {
			return nil, &DecodeError{Method: op.method, Path: op.urlPath(), StatusCode: resp.StatusCode, What: "response", Err: err}
		}
		return nil, &TransportError{Method: op.method, Path: op.urlPath(), Attempts: 1, MaybeSent: true, Err: err}
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
		return &DecodeError{Method: op.method, Path: op.urlPath(), StatusCode: resp.StatusCode, What: what, Snippet: oneLine(string(c.redact(b)), 256), Err: err}
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
		return nil, &DecodeError{Method: op.method, Path: op.urlPath(), StatusCode: status, What: "JSON", Snippet: oneLine(string(c.redact(b)), 256), Err: errors.New("body is not valid JSON")}
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
		return nil, &DecodeError{Method: op.method, Path: op.urlPath(), StatusCode: status, What: "dictionary", Snippet: oneLine(string(c.redact(b)), 256), Err: err}
	}
	return out, nil
}
