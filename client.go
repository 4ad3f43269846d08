package labelprinter

import (
	"context"
	"encoding/base64"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// Version is the version the SDK was first published as.
//
// Deprecated: the User-Agent names the version of this module the program was built with, from
// its build information (see [WithUserAgent]); Version is no longer updated.
const Version = "0.1.0"

const (
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
	basePath  string // [/prefix]/api/v3, escaped: the part of base errors and logs show
	rc        *retryablehttp.Client
	transport http.RoundTripper // the caller's or our own, for Close

	userAgent []string
	authz     []string
	headers   http.Header
	redactor  *redactor // nil without credentials
	// secrets and redactedFunc rebuild redactor with the credentials of the moment, when
	// there are WithRedactedValuesFunc functions (see redactorNow).
	secrets      []string
	redactedFunc []func() []string

	policy           RetryPolicy
	budget           *retryBudget
	logger           *slog.Logger
	maxResponseBytes int64
	pollInterval     time.Duration

	// protoMajor is the HTTP major version the printer's last answer came with, or 0 before
	// any over TLS, where ALPN may still choose HTTP/2. It decides whether an upload of
	// unknown length asks "Expect: 100-continue" (see send). A pointer, because a Client value
	// is printed by value (String) and must stay copyable.
	protoMajor *atomic.Int32

	// jitter and sleep are replaced by tests for deterministic waits.
	jitter func() float64
	sleep  func(ctx context.Context, d time.Duration) error
}

// service is shared by all service types, so wiring them costs one allocation.
type service struct{ client *Client }

// NewClient returns a Client for the printer at baseURL, "http://host[:port][/prefix]"; the
// "/api/v3" segment is appended unless it is already there. A base URL ending in another
// version ("/api/v2") is refused with ErrInvalidArgument naming it, as is a host that could
// not be written back into a request URL. It reads no environment variable
// (the default transport honours the standard proxy variables, as net/http's does) and
// touches no network.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	base, basePath, err := parseBaseURL(baseURL)
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
		basePath:         basePath,
		policy:           o.policy,
		budget:           newRetryBudget(o.policy.Budget),
		logger:           o.logger,
		maxResponseBytes: o.maxResponse,
		pollInterval:     o.pollInterval,
		jitter:           rand.Float64,
		sleep:            sleepCtx,
		headers:          o.headers,
		protoMajor:       new(atomic.Int32),
	}
	ua := "go-labelprinter/" + moduleVersion()
	if o.userAgent != "" {
		ua = o.userAgent + " " + ua
	}
	c.userAgent = []string{ua}

	auths := 0
	var secrets []string
	if o.bearer != "" {
		auths++
		c.authz = []string{"Bearer " + string(o.bearer)}
		secrets = append(secrets, string(o.bearer))
	}
	if o.hasBasic {
		auths++
		enc := base64.StdEncoding.EncodeToString([]byte(o.basicUser + ":" + string(o.basicPass)))
		c.authz = []string{"Basic " + enc}
		secrets = append(secrets, enc, string(o.basicPass))
	}
	if _, ok := o.headers["Authorization"]; ok {
		auths++
	}
	if auths > 1 {
		return nil, invalidArg("NewClient", "more than one option sets the Authorization header")
	}
	for name, vs := range o.headers {
		if credentialHeader(name) {
			for _, v := range vs {
				secrets = append(secrets, headerCredentials(v)...)
			}
		}
	}
	for _, v := range o.redacted {
		secrets = append(secrets, string(v))
	}
	c.redactor = newRedactor(secrets)
	if len(o.redactedFunc) > 0 {
		c.secrets, c.redactedFunc = secrets, o.redactedFunc
	}

	hc, err := buildHTTPClient(o.httpClient, o.tlsConfig)
	if err != nil {
		return nil, err
	}
	c.transport = hc.Transport
	if strings.HasPrefix(base, "http:") && !cleartextHTTP2Only(hc.Transport) {
		c.protoMajor.Store(1)
	}
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
