package labelprinter

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

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
	redacted     []secret
	redactedFunc []func() []string
	userAgent    string
	policy       RetryPolicy
	logger       *slog.Logger
	maxResponse  int64
	pollInterval time.Duration
}

// secret keeps a credential out of every %v, %+v, %#v and slog rendering of a value that holds it.
type secret string

func (secret) String() string { return "[REDACTED]" }

func (secret) GoString() string { return `"[REDACTED]"` }

func (secret) LogValue() slog.Value { return slog.StringValue("[REDACTED]") }

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
// requires. The value of Authorization, Proxy-Authorization, Cookie, or a header whose name
// holds "auth", "token", "key", "secret", "pass" or "session" (case aside) is a credential: no
// run of 12 bytes of it (all of it when shorter) appears in an error or a log line. Other
// headers are sent as given and may be shown.
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

// WithRedactedValues names credentials that a transport of yours adds (the Transport of a
// WithHTTPClient client: an OAuth2 client secret, a token it reads from a file, a header it
// sets), which the Client cannot see. They are kept out of errors and log lines by the same rule
// as the Client's own: no run of 12 bytes of a value (all of it when shorter) shows, whether a
// printer or proxy echoes it raw, JSON-escaped, percent-encoded or as HTML references, and
// wherever the 64 KiB cut of an error body falls. Each value is looked for as given: pass the
// token of a "Bearer <token>" header, not only the header's value. Empty values are ignored, so
// values read from files that may be empty can be passed as they are; the option may be given
// more than once. Values are read once, when NewClient runs: for credentials that rotate, use
// WithRedactedValuesFunc. Client.Redact applies the same rule to text of your own.
func WithRedactedValues(values ...string) Option {
	return func(o *clientOptions) error {
		for _, v := range values {
			if v != "" {
				o.redacted = append(o.redacted, secret(v))
			}
		}
		return nil
	}
}

// WithRedactedValuesFunc is WithRedactedValues for credentials that change while the Client
// lives, such as a token file your transport re-reads on every request: values is called each
// time the Client builds an error or a log line, or runs Client.Redact, and what it returns
// then is removed by the same rule, beside the fixed credentials. A request that succeeds
// never calls it, so it may read files. It must be safe for concurrent use; empty values are
// ignored; a nil values is an error. A value that was sent but replaced before its answer
// came back is not known to it: pass the values your transport last sent, or keep the old
// ones in the list for a while, when a credential may rotate during one request.
func WithRedactedValuesFunc(values func() []string) Option {
	return func(o *clientOptions) error {
		if values == nil {
			return invalidArg("WithRedactedValuesFunc", "values is nil")
		}
		o.redactedFunc = append(o.redactedFunc, values)
		return nil
	}
}

// WithUserAgent puts ua in front of the SDK's own User-Agent, so the printer's logs still show
// the SDK version. The SDK's own is go-labelprinter/ and the version of this module the program
// was built with, as its build information holds it: v0.9.7 in a program that requires v0.9.7,
// a pseudo-version or "devel" in a build from a clone of the module, "unknown" in a program
// built without module support.
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
// Any positive n is accepted, math.MaxInt64 meaning no cap in practice. Memory follows the bytes
// that arrived, whatever the cap: a Content-Length the server declares reserves nothing. Image
// downloads stream to the caller's writer and are not capped.
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
