package labelprinter

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

// TestRedirects: POST, PUT and DELETE never follow; GET follows only to the same origin.
func TestRedirects(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			t.Error("credential sent to another host")
		}
		w.Write([]byte(`{}`))
	}))
	defer other.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/v3/labels/moved" {
				w.Write([]byte(`{"ok":true}`))
				return
			}
			target := other.URL + r.URL.Path
			if r.URL.Path == "/api/v3/labels/same" {
				target = "/api/v3/labels/moved"
			}
			http.Redirect(w, r, target, code)
		})
		c, _ := rtClient(t, srv.URL, WithBearerToken("tok"), WithHeader("X-Api-Key", "key"))
		ctx := t.Context()
		var re *RedirectError
		if _, err := c.Printers.PrintJob(ctx, "p", &PrintJob{LabelName: "L"}); !errors.As(err, &re) {
			t.Errorf("%d printJob: %v", code, err)
		}
		if err := c.Labels.Put(ctx, "L", []byte(`{}`)); !errors.As(err, &re) {
			t.Errorf("%d PUT: %v", code, err)
		}
		if err := c.Labels.Delete(ctx, "L"); !errors.As(err, &re) {
			t.Errorf("%d DELETE: %v", code, err)
		}
		if _, err := c.Labels.Get(ctx, "L"); !errors.As(err, &re) {
			t.Errorf("%d cross-host GET: %v", code, err)
		}
		if raw, err := c.Labels.Get(ctx, "same"); err != nil || string(raw) != `{"ok":true}` {
			t.Errorf("%d same-origin GET: %s %v", code, raw, err)
		}
		if srv.hits.Load() != 6 {
			t.Errorf("%d: %d requests (redirect refusals must not be retried)", code, srv.hits.Load())
		}
	}
	if elsewhere.Load() != 0 {
		t.Errorf("the other host received %d requests", elsewhere.Load())
	}
}

// TestTLS: verification is on by default and never retried; a CA pool goes through
// WithTLSConfig.
func TestTLS(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	c, _ := rtClient(t, srv.URL)
	_, err := c.Printers.Status(t.Context())
	var te *TransportError
	if !errors.As(err, &te) || hits.Load() != 0 || te.Attempts != 1 {
		t.Errorf("self-signed printer: %v after %d attempts", err, te.Attempts)
	}

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	ok, _ := rtClient(t, srv.URL, WithTLSConfig(&tls.Config{RootCAs: pool}))
	if _, err := ok.Printers.Status(t.Context()); err != nil {
		t.Errorf("with the printer's CA: %v", err)
	}
	if tr := DefaultTransport(); tr.TLSClientConfig.InsecureSkipVerify || tr.TLSClientConfig.MinVersion < tls.VersionTLS12 {
		t.Error("default TLS config is weak")
	}
}

func TestConnectionReuse(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/labels/missing" {
			w.WriteHeader(404)
			w.Write([]byte(`{"message":"no such label"}`))
			return
		}
		w.Write([]byte(`{"triggers":1,"triggerBounces":0,"printedLabels":1}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, _ := rtClient(t, srv.URL)
	for i := 0; i < 200; i++ {
		if _, err := c.Printers.Counters(t.Context(), "p"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Labels.Get(t.Context(), "missing"); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}
	if conns.Load() != 1 {
		t.Errorf("400 calls opened %d connections, want 1", conns.Load())
	}
}

// TestCheckRedirectRules covers the origins the rule compares.
func TestCheckRedirectRules(t *testing.T) {
	req := func(method, u string) *http.Request {
		r, _ := http.NewRequest(method, u, nil)
		return r
	}
	first := req("GET", "https://printer:8443/api/v3/labels")
	for target, allowed := range map[string]bool{
		"https://printer:8443/api/v3/other": true,
		"https://PRINTER:8443/api/v3/other": true,
		"http://printer:8443/api/v3/other":  false, // https to http
		"https://printer:9443/api/v3/other": false, // another port
		"https://printer/api/v3/other":      false, // default port is another port
		"https://evil:8443/api/v3/other":    false,
	} {
		err := checkRedirect(req("GET", target), []*http.Request{first})
		if (err == nil) != allowed {
			t.Errorf("GET to %s: %v", target, err)
		}
	}
	if err := checkRedirect(req("GET", "https://printer:8443/x"), []*http.Request{first, first, first, first}); err == nil {
		t.Error("a fourth hop was followed")
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		if err := checkRedirect(req(m, "https://printer:8443/x"), []*http.Request{req(m, "https://printer:8443/y")}); err == nil {
			t.Errorf("%s followed a same-origin redirect", m)
		}
	}
}

// TestCloseReleasesIdle: Close hangs up the idle keep-alive connections.
func TestCloseReleasesIdle(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	defer srv.Close()
	c, _ := rtClient(t, srv.URL)
	if _, err := c.Labels.List(t.Context()); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("the idle connection stayed open after Close")
	}
}

// TestMutualTLS: client certificates go through WithTLSConfig; without one the printer refuses
// the handshake and the call is not retried.
func TestMutualTLS(t *testing.T) {
	ca := testkit.NewCA(t)
	pool := ca.Pool()
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, `{}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, "printer", testkit.Server).TLS}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()

	anon, _ := rtClient(t, srv.URL, WithTLSConfig(&tls.Config{RootCAs: pool}))
	_, err := anon.Printers.Status(t.Context())
	var te *TransportError
	if !errors.As(err, &te) || te.Attempts != 1 || hits.Load() != 0 {
		t.Errorf("without a client certificate: %v", err)
	}
	client := ca.Issue(t, "line-pc", testkit.Client).TLS
	authed, _ := rtClient(t, srv.URL, WithTLSConfig(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{client}}))
	if _, err := authed.Printers.Status(t.Context()); err != nil || hits.Load() != 1 {
		t.Errorf("with a client certificate: %v", err)
	}
}
