package main

// How labelctl reaches the printer: the Client built from the global flags, with its TLS setup
// (a private CA, a client certificate for mTLS), the check of --url, and -v's answer lines.

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// connect builds the Client from the global flags, once per invocation.
func (a *app) connect() (*labelprinter.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	if a.url == "" {
		return nil, usagef("no printer: give --url or set LABELPRINTER_URL (or start one with 'labelctl sim')")
	}
	if err := checkURL(a.url); err != nil {
		return nil, err
	}
	var opts []labelprinter.Option
	token := a.token
	if token == "" {
		token = a.env("LABELPRINTER_TOKEN")
	}
	if token != "" {
		opts = append(opts, labelprinter.WithBearerToken(token))
	}
	// labelctl builds the SDK's default transport itself, so that -v can see each answer.
	tr := labelprinter.DefaultTransport()
	if a.insecure || a.caCert != "" || a.cert != "" || a.certKey != "" {
		cfg, err := a.tlsConfig()
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	var rt http.RoundTripper = tr
	if a.verbose {
		logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		opts = append(opts, labelprinter.WithLogger(logger))
		rt = &answerLog{rt: tr, log: logger}
	}
	opts = append(opts, labelprinter.WithHTTPClient(&http.Client{Transport: rt}))
	c, err := labelprinter.NewClient(a.url, opts...)
	if err != nil {
		return nil, usageError{err}
	}
	a.client = c
	return c, nil
}

// tlsConfig is the TLS setup the flags ask for: verification off, a private CA, a client
// certificate for a printer behind mTLS.
func (a *app) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: a.insecure} //nolint:gosec // asked for by name
	if a.caCert != "" {
		pem, err := os.ReadFile(a.caCert)
		if err != nil {
			return nil, usagef("--ca-cert: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--ca-cert: no PEM certificate in %s", a.caCert)
		}
		cfg.RootCAs = pool
	}
	switch {
	case a.cert != "" && a.certKey == "":
		return nil, usagef("--cert needs --cert-key (or LABELPRINTER_KEY), the file with its private key")
	case a.cert == "" && a.certKey != "":
		return nil, usagef("--cert-key needs --cert (or LABELPRINTER_CERT), the file with the client certificate")
	case a.cert != "":
		pair, err := tls.LoadX509KeyPair(a.cert, a.certKey)
		if err != nil {
			return nil, usagef("--cert %s, --cert-key %s: %v", a.cert, a.certKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// checkURL refuses a --url without a scheme with the URL it probably meant; the SDK would say
// only that the URL does not parse (127.0.0.1:8632) or has the wrong scheme (localhost:8632).
func checkURL(raw string) error {
	if raw == "" || strings.Contains(raw, "://") {
		return nil
	}
	lower := strings.ToLower(raw)
	if strings.Contains(raw, "@") || strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:") {
		// Credentials are never repeated; a mangled scheme has no obvious fix.
		return usagef("--url needs http:// or https:// at the start")
	}
	return usagef("--url %s has no scheme: try --url http://%s", raw, raw)
}

// answerLog logs each answer's status and how long it took (-v), one line per attempt, next to
// the SDK's request lines. It logs the method and path only: never a header or a query.
type answerLog struct {
	rt  http.RoundTripper
	log *slog.Logger
}

func (l *answerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := l.rt.RoundTrip(r)
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Duration("duration", time.Since(start))}
	if err != nil {
		l.log.LogAttrs(r.Context(), slog.LevelDebug, "labelprinter answer", append(attrs, slog.String("error", err.Error()))...)
		return resp, err
	}
	l.log.LogAttrs(r.Context(), slog.LevelDebug, "labelprinter answer", append(attrs, slog.Int("status", resp.StatusCode))...)
	return resp, nil
}

// CloseIdleConnections lets Client.Close reach the transport.
func (l *answerLog) CloseIdleConnections() {
	if ci, ok := l.rt.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
