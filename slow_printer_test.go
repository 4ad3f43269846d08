package labelprinter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// The printer users really meet is not always fast: it keeps working on a print after the
// client (or a gateway in front of it) gave up. slowPrinter is such a printer, written by hand
// over real HTTP: it answers a print request (printJob or trigger) only by hanging up, and acts
// on it once the caller has gone, either at once or when the test says so. Its counters answer
// at once.

// slowPrinter counts the print requests it acted on; a trigger prints one label.
type slowPrinter struct {
	*httptest.Server
	mu       sync.Mutex
	counters PrintCounters
	received int           // print requests that arrived
	acted    chan struct{} // one send per print request acted on
	release  chan struct{} // when non-nil, acting waits for it to be closed
	lag      time.Duration // how long after the caller left it acts; set before the first request
}

// startSlowPrinter starts the printer; with late set it acts only after release is closed.
func startSlowPrinter(t *testing.T, late bool) *slowPrinter {
	t.Helper()
	p := &slowPrinter{acted: make(chan struct{}, 64)}
	if late {
		p.release = make(chan struct{})
	}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		if p.release != nil {
			select {
			case <-p.release:
			default:
				close(p.release)
			}
		}
		p.Close()
	})
	return p
}

func (p *slowPrinter) serve(w http.ResponseWriter, r *http.Request) {
	// Reading the body lets the server notice when the caller hangs up.
	_, _ = io.Copy(io.Discard, r.Body)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/printCounters"):
		p.mu.Lock()
		c := p.counters
		p.mu.Unlock()
		w.Header().Set("Content-Type", mediaJSON)
		fmt.Fprintf(w, `{"triggers":%d,"triggerBounces":%d,"printedLabels":%d}`, c.Triggers, c.TriggerBounces, c.PrintedLabels)
	case r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/trigger") || strings.HasSuffix(r.URL.Path, "/printJob")):
		p.mu.Lock()
		p.received++
		p.mu.Unlock()
		// Still working when the caller gives up: the answer never comes...
		<-r.Context().Done()
		if p.release != nil {
			<-p.release
		}
		time.Sleep(p.lag) // the print itself takes a while
		// ...and the print happens anyway.
		if strings.HasSuffix(r.URL.Path, "/trigger") {
			p.mu.Lock()
			p.counters.Triggers++
			p.counters.PrintedLabels++
			p.mu.Unlock()
		}
		p.acted <- struct{}{}
	default:
		http.NotFound(w, r)
	}
}

// waitActed waits (bounded) until the printer has acted on n print requests in all.
func (p *slowPrinter) waitActed(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-p.acted:
		case <-time.After(time.Minute):
			t.Fatal("the printer never acted on the request")
		}
	}
}

func (p *slowPrinter) snapshot() (PrintCounters, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counters, p.received
}

// gateway is a reverse proxy in front of target that gives up on an answer after a short
// wait, as nginx does with proxy_read_timeout: 502 Bad Gateway (httputil's answer) or, with
// status 504, 504 Gateway Timeout with an HTML page. By then it has forwarded the request.
func gateway(t *testing.T, target string, status int) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	tr := DefaultTransport()
	tr.ResponseHeaderTimeout = 50 * time.Millisecond
	rp.Transport = tr
	if status == http.StatusGatewayTimeout {
		rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusGatewayTimeout)
			io.WriteString(w, "<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center><hr><center>nginx</center></body></html>\n")
		}
	}
	rp.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(rp)
	t.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	return srv
}

// byPath sends requests whose path ends in suffix through special, the rest through the
// default transport: a client whose timeout bites only on the slow call.
type byPath struct {
	suffix           string
	special, regular http.RoundTripper
}

func (b byPath) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, b.suffix) {
		return b.special.RoundTrip(r)
	}
	return b.regular.RoundTrip(r)
}

// slowClient is a Client of url that makes one attempt per call, gives up on a trigger after
// 100 ms without an answer, and waits as long as needed for anything else.
func slowClient(t *testing.T, url string) *Client {
	t.Helper()
	impatient := DefaultTransport()
	impatient.ResponseHeaderTimeout = 100 * time.Millisecond
	regular := DefaultTransport()
	c, err := NewClient(url, WithRetry(RetryPolicy{MaxAttempts: 1}),
		WithHTTPClient(&http.Client{Transport: byPath{suffix: "/trigger", special: impatient, regular: regular}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		impatient.CloseIdleConnections()
		regular.CloseIdleConnections()
	})
	return c
}

// patientClient is a Client of url that makes one attempt per call and waits for every answer
// as long as the default transport does: behind a gateway, the gateway is the one giving up.
func patientClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := NewClient(url, WithRetry(RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestConfirmTriggerSlowPrinter: a trigger the client gave up on (its answer timed out) and
// the printer printed afterwards is never "not received": with the default Settle it is
// TriggerUnknown, and with a Settle long enough for the printer it is TriggerPrinted.
func TestConfirmTriggerSlowPrinter(t *testing.T) {
	t.Run("counted after the confirmation", func(t *testing.T) {
		p := startSlowPrinter(t, true)
		c := slowClient(t, p.URL)
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerUnknown || !errors.Is(res.Err, ErrOutcomeUnknown) {
			t.Fatalf("%+v, %v", res, err)
		}
		if !isTimeout(res.Err) {
			t.Errorf("the trigger's error is not a timeout: %v", res.Err)
		}
		// The printer goes on and prints the label: resending would have printed a second.
		close(p.release)
		p.waitActed(t, 1)
		if got, n := p.snapshot(); got.PrintedLabels != 1 || n != 1 {
			t.Errorf("counters %+v after %d trigger requests", got, n)
		}
	})
	t.Run("counted within Settle", func(t *testing.T) {
		p := startSlowPrinter(t, false)
		p.lag = 750 * time.Millisecond // three default Settles: several readings are needed
		c := slowClient(t, p.URL)
		// The minute is a bound for a loaded machine; the call returns once the label shows.
		start := time.Now()
		res, err := c.Printers.ConfirmTriggerWith(t.Context(), "line1", &ConfirmOptions{Settle: time.Minute})
		if err != nil || res.Outcome != TriggerPrinted || !errors.Is(res.Err, ErrOutcomeUnknown) ||
			res.After != (PrintCounters{Triggers: 1, PrintedLabels: 1}) {
			t.Fatalf("%+v, %v", res, err)
		}
		t.Logf("Settle 1 min, a printer that counts 750 ms after the client gave up at 100 ms: printed, settled after %v", time.Since(start).Round(time.Millisecond))
	})
}

// TestConfirmTriggerBehindGateway: a gateway that gives up on the printer answers 502 or 504
// after forwarding the trigger; the printer prints it late. ConfirmTrigger says
// TriggerUnknown, or TriggerPrinted when given the time, never TriggerNotReceived.
func TestConfirmTriggerBehindGateway(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, http.StatusGatewayTimeout} {
		t.Run(fmt.Sprint(status, " counted after the confirmation"), func(t *testing.T) {
			p := startSlowPrinter(t, true)
			c := patientClient(t, gateway(t, p.URL, status).URL)
			res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
			var apiErr *APIError
			if err != nil || res.Outcome != TriggerUnknown || !errors.As(res.Err, &apiErr) || apiErr.StatusCode != status {
				t.Fatalf("%+v, %v", res, err)
			}
			close(p.release)
			p.waitActed(t, 1)
			if got, _ := p.snapshot(); got.PrintedLabels != 1 {
				t.Errorf("counters %+v", got)
			}
		})
		t.Run(fmt.Sprint(status, " counted within Settle"), func(t *testing.T) {
			p := startSlowPrinter(t, false)
			p.lag = 750 * time.Millisecond
			c := patientClient(t, gateway(t, p.URL, status).URL)
			res, err := c.Printers.ConfirmTriggerWith(t.Context(), "line1", &ConfirmOptions{Settle: time.Minute})
			if err != nil || res.Outcome != TriggerPrinted || !errors.Is(res.Err, ErrOutcomeUnknown) || !errors.Is(res.Err, ErrServer) {
				t.Fatalf("%+v, %v", res, err)
			}
		})
	}
}

// TestConfirmTriggerRefused: a trigger that provably never reached the printer, because the
// connection could not be made, is "not received", after the one extra reading.
func TestConfirmTriggerRefused(t *testing.T) {
	p := startSlowPrinter(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	refused := DefaultTransport()
	refused.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, closed)
	}
	regular := DefaultTransport()
	t.Cleanup(regular.CloseIdleConnections)
	c, err := NewClient(p.URL, WithRetry(RetryPolicy{MaxAttempts: 1}),
		WithHTTPClient(&http.Client{Transport: byPath{suffix: "/trigger", special: refused, regular: regular}}))
	if err != nil {
		t.Fatal(err)
	}
	rec := &wtRecorder{}
	c.sleep = rec.sleep
	res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
	var te *TransportError
	if err != nil || res.Outcome != TriggerNotReceived || !errors.As(res.Err, &te) || te.MaybeSent || errors.Is(res.Err, ErrOutcomeUnknown) {
		t.Fatalf("%+v, %v", res, err)
	}
	if w := rec.got(); len(w) != 1 || w[0] != confirmPause {
		t.Errorf("waits %v, want one pause", w)
	}
	if _, n := p.snapshot(); n != 0 {
		t.Errorf("the printer got %d triggers", n)
	}
}

// TestPrintOnceGateway5xx: a print request a gateway answered 502 or 504 after forwarding it,
// or the printer answered 500, matches ErrOutcomeUnknown and ErrServer and is still the
// *APIError with the status; it is sent once. 503 is "not processed", and other calls'
// 5xx are not unknown outcomes.
func TestPrintOnceGateway5xx(t *testing.T) {
	t.Logf("%d print calls x (502, 504 from a gateway; 500, 503, 501 from the printer)", len(rtPrintOnce))
	for name, call := range rtPrintOnce {
		for _, status := range []int{http.StatusBadGateway, http.StatusGatewayTimeout} {
			t.Run(fmt.Sprint(name, "/", status), func(t *testing.T) {
				t.Parallel()
				p := startSlowPrinter(t, false)
				c, waits := rtClient(t, gateway(t, p.URL, status).URL)
				err := call(t.Context(), c)
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Attempts != 1 {
					t.Fatalf("err %v", err)
				}
				if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrServer) {
					t.Errorf("%v: ErrOutcomeUnknown %v, ErrServer %v", err, errors.Is(err, ErrOutcomeUnknown), errors.Is(err, ErrServer))
				}
				// The gateway had forwarded it: the printer acted on it, once.
				p.waitActed(t, 1)
				if _, n := p.snapshot(); n != 1 || len(*waits) != 0 {
					t.Errorf("the printer got %d requests; waits %v", n, *waits)
				}
			})
		}
		for _, status := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusNotImplemented} {
			t.Run(fmt.Sprint(name, "/", status), func(t *testing.T) {
				t.Parallel()
				srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.WriteHeader(status)
				})
				c, _ := rtClient(t, srv.URL)
				err := call(t.Context(), c)
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != status || !errors.Is(err, ErrServer) || srv.hits.Load() != 1 {
					t.Fatalf("err %v after %d requests", err, srv.hits.Load())
				}
				if want := status == http.StatusInternalServerError; errors.Is(err, ErrOutcomeUnknown) != want {
					t.Errorf("%v: matches ErrOutcomeUnknown %v, want %v", err, !want, want)
				}
			})
		}
	}
	t.Run("other calls", func(t *testing.T) {
		srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusBadGateway)
		})
		c, _ := rtClient(t, srv.URL, WithRetry(RetryPolicy{MaxAttempts: 1}))
		for name, call := range rtIdempotent {
			if err := call(t.Context(), c); !errors.Is(err, ErrServer) || errors.Is(err, ErrOutcomeUnknown) {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
