package httpcreds

import (
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"

	promconfig "github.com/prometheus/common/config"
)

// maxSent bounds the credential values a Recorder remembers: the most recent distinct ones.
// An OAuth2 access token is renewed every hour or so; the value an answer echoes was sent by
// its own request a moment before, so the most recent few are enough.
const maxSent = 64

// minCookieValue is the shortest cookie value recorded on its own (the whole Cookie header is
// recorded whatever its length).
const minCookieValue = 8

// sensitive are the headers whose values are credentials, whoever adds them: prometheus/common's
// authorization, bearer, basic-auth and OAuth2 round trippers (Authorization), a proxy URL's
// user (Proxy-Authorization), and http_headers (Cookie, say).
var sensitive = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// Recorder remembers the Authorization, Proxy-Authorization and Cookie values that requests
// carry when their headers are written to the connection, after every round tripper has added
// its own: an OAuth2 access token fetched by the round tripper, which no configuration holds,
// included. It sees them through net/http's client trace (WroteHeaderField), which both the
// HTTP/1 and the HTTP/2 transport call. A Recorder is safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	vals []string // oldest first, at most maxSent
}

// RoundTripper returns next with r watching the headers of every request it sends.
func (r *Recorder) RoundTripper(next http.RoundTripper) http.RoundTripper {
	return &recordingTransport{next: next, rec: r}
}

// Values returns the values recorded, oldest first: each header value, the part after its
// scheme ("Bearer <token>"), and each cookie's value of 8 bytes or more, so that an echo of the
// bare token or session cookie is found too. HTTP/2 sends each cookie as a field of its own.
func (r *Recorder) Values() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.vals...)
}

// wrote is the trace hook: it is called for every header field written.
func (r *Recorder) wrote(key string, values []string) {
	name := ""
	for _, s := range sensitive {
		if strings.EqualFold(key, s) {
			name = s
		}
	}
	if name == "" {
		return
	}
	for _, v := range values {
		// As the SDK takes a credential header of its own: the value, and the part after
		// "<scheme> ", which a server may echo alone.
		v = strings.TrimSpace(v)
		r.add(v)
		if _, cred, ok := strings.Cut(v, " "); ok {
			r.add(strings.TrimSpace(cred))
		}
		if name == "Cookie" {
			// Each cookie's value, when long enough to be a session's: a short one ("dark")
			// is no secret, and redacting it would blank ordinary words out of errors.
			for _, c := range strings.Split(v, ";") {
				if _, val, ok := strings.Cut(strings.TrimSpace(c), "="); ok && len(strings.Trim(val, `"`)) >= minCookieValue {
					r.add(strings.Trim(val, `"`))
				}
			}
		}
	}
}

func (r *Recorder) add(v string) {
	if v == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, have := range r.vals {
		if have == v {
			// Most recent last, so the oldest is the one dropped.
			copy(r.vals[i:], r.vals[i+1:])
			r.vals[len(r.vals)-1] = v
			return
		}
	}
	if len(r.vals) == maxSent {
		copy(r.vals, r.vals[1:])
		r.vals = r.vals[:maxSent-1]
	}
	r.vals = append(r.vals, v)
}

// recordingTransport adds the Recorder's hook to each request's client trace (after any the
// caller set, which still run).
type recordingTransport struct {
	next http.RoundTripper
	rec  *Recorder
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{WroteHeaderField: t.rec.wrote})
	return t.next.RoundTrip(req.WithContext(ctx))
}

// CloseIdleConnections passes on to the wrapped round tripper.
func (t *recordingTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Credentials are everything a config's client may send that is secret: what the config
// names (its Source, files read at each call) and what its transport was seen sending.
type Credentials struct {
	Source
	Sent *Recorder
}

// Values returns the config's credentials as they are now and the values sent lately.
func (c *Credentials) Values() []string { return append(c.Source.Values(), c.Sent.Values()...) }

// NewClient builds the http.Client hc describes, as promconfig.NewClientFromConfig does, with
// a Recorder on its transport, and returns the credentials that go with it. Pass
// Credentials.Values to labelprinter.WithRedactedValuesFunc: it is the one place the tools
// learn what their transports send.
func NewClient(hc promconfig.HTTPClientConfig, name string, opts ...promconfig.HTTPClientOption) (*http.Client, *Credentials, error) {
	c, err := promconfig.NewClientFromConfig(hc, name, opts...)
	if err != nil {
		return nil, nil, err
	}
	creds := &Credentials{Source: Of(&hc), Sent: new(Recorder)}
	c.Transport = creds.Sent.RoundTripper(c.Transport)
	return c, creds, nil
}

// NewRoundTripper is NewClient for a caller that builds its own http.Client around the round
// tripper (to add layers of its own, or its own redirect rule).
func NewRoundTripper(hc promconfig.HTTPClientConfig, name string, opts ...promconfig.HTTPClientOption) (http.RoundTripper, *Credentials, error) {
	rt, err := promconfig.NewRoundTripperFromConfig(hc, name, opts...)
	if err != nil {
		return nil, nil, err
	}
	creds := &Credentials{Source: Of(&hc), Sent: new(Recorder)}
	return creds.Sent.RoundTripper(rt), creds, nil
}
