package labelprinter

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

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

// cleartextHTTP2Only reports whether rt speaks HTTP/2 without TLS and not HTTP/1 (prior
// knowledge), the one way a plain http:// printer is reached over HTTP/2.
func cleartextHTTP2Only(rt http.RoundTripper) bool {
	t, ok := rt.(*http.Transport)
	return ok && t.Protocols != nil && t.Protocols.UnencryptedHTTP2() && !t.Protocols.HTTP1()
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
