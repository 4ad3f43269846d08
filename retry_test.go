package labelprinter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rtServer is an httptest server that counts requests and answers through a handler.
type rtServer struct {
	*httptest.Server
	hits atomic.Int64
}

func rtStart(t *testing.T, h func(n int64, w http.ResponseWriter, r *http.Request)) *rtServer {
	t.Helper()
	s := &rtServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(s.hits.Add(1), w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// rtClient returns a Client for url whose waits are recorded instead of slept.
func rtClient(t *testing.T, url string, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := NewClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, waits
}

// rtReset drops the connection with a TCP RST, after the handler read the request.
func rtReset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.(*net.TCPConn).SetLinger(0)
	_ = conn.Close()
}

// rtOps are the operations grouped by retry class, each sending one request.
var rtIdempotent = map[string]func(context.Context, *Client) error{
	"Labels.Get":      func(ctx context.Context, c *Client) error { _, err := c.Labels.Get(ctx, "L"); return err },
	"Labels.List":     func(ctx context.Context, c *Client) error { _, err := c.Labels.List(ctx); return err },
	"Labels.Put":      func(ctx context.Context, c *Client) error { return c.Labels.Put(ctx, "L", []byte(`{}`)) },
	"Labels.Delete":   func(ctx context.Context, c *Client) error { return c.Labels.Delete(ctx, "L") },
	"Labels.Simulate": func(ctx context.Context, c *Client) error { _, err := c.Labels.Simulate(ctx, "L", nil); return err },
	"Images.List":     func(ctx context.Context, c *Client) error { _, err := c.Images.List(ctx, nil); return err },
	"Images.Download": func(ctx context.Context, c *Client) error {
		_, err := c.Images.Download(ctx, "i", io.Discard)
		return err
	},
	"Images.Put": func(ctx context.Context, c *Client) error {
		return c.Images.Put(ctx, "i", strings.NewReader("x"), "image/png", nil)
	},
	"Images.PutJSON": func(ctx context.Context, c *Client) error {
		return c.Images.PutJSON(ctx, "i", ImageUpload{Data: []byte("x")})
	},
	"Images.Delete":       func(ctx context.Context, c *Client) error { return c.Images.Delete(ctx, "i") },
	"Tables.Get":          func(ctx context.Context, c *Client) error { _, err := c.Tables.Get(ctx, "T"); return err },
	"Tables.List":         func(ctx context.Context, c *Client) error { _, err := c.Tables.List(ctx); return err },
	"Tables.Put":          func(ctx context.Context, c *Client) error { return c.Tables.Put(ctx, "T", []byte(`{}`)) },
	"Tables.Delete":       func(ctx context.Context, c *Client) error { return c.Tables.Delete(ctx, "T") },
	"Printers.AbortPrint": func(ctx context.Context, c *Client) error { _, err := c.Printers.AbortPrint(ctx, "p"); return err },
	"Printers.Status":     func(ctx context.Context, c *Client) error { _, err := c.Printers.Status(ctx); return err },
}

var rtPrintOnce = map[string]func(context.Context, *Client) error{
	"Printers.PrintJob": func(ctx context.Context, c *Client) error {
		_, err := c.Printers.PrintJob(ctx, "p", &PrintJob{LabelName: "L"})
		return err
	},
	"Printers.PrintJob single": func(ctx context.Context, c *Client) error {
		_, err := c.Printers.PrintJob(ctx, "", &PrintJob{LabelName: "L"})
		return err
	},
	"Printers.DeselectJobs": func(ctx context.Context, c *Client) error { _, err := c.Printers.DeselectJobs(ctx, "p"); return err },
	"Printers.Trigger":      func(ctx context.Context, c *Client) error { _, err := c.Printers.Trigger(ctx, "p"); return err },
}

// TestRetryIdempotentOnStatus: every idempotent operation meets 503, 503, then success.
func TestRetryIdempotentOnStatus(t *testing.T) {
	for name, call := range rtIdempotent {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if n <= 2 {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				w.Write([]byte(`{}`))
			})
			c, waits := rtClient(t, srv.URL)
			if err := call(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			if n := srv.hits.Load(); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
			if len(*waits) != 2 {
				t.Errorf("%d waits, want 2", len(*waits))
			}
		})
	}
}

// TestNoRetryForPrintOnce: printJob and trigger reach the server once whatever the answer.
func TestNoRetryForPrintOnce(t *testing.T) {
	faults := map[string]func(w http.ResponseWriter, r *http.Request){
		"503": func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Retry-After", "0"); w.WriteHeader(503) },
		"500": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
		"429": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) },
		"reset after read": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			rtReset(w)
		},
		"timeout": func(w http.ResponseWriter, r *http.Request) {
			// Reading the body lets the server notice when the client hangs up.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
	}
	for name, call := range rtPrintOnce {
		for fault, h := range faults {
			t.Run(name+"/"+fault, func(t *testing.T) {
				t.Parallel()
				arrived := make(chan struct{}, 1)
				srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
					select { // a second request, the failure counted below, must not block
					case arrived <- struct{}{}:
					default:
					}
					if r.Header.Get("Idempotency-Key") != "" || r.Header.Get("X-Idempotency-Key") != "" {
						t.Error("idempotency header on the wire")
					}
					h(w, r)
				})
				tr := DefaultTransport()
				tr.ResponseHeaderTimeout = 100 * time.Millisecond
				c, waits := rtClient(t, srv.URL, WithHTTPClient(&http.Client{Transport: tr}))
				err := call(t.Context(), c)
				if err == nil {
					t.Fatal("no error")
				}
				// A client that gave up on the answer may return before a loaded server has even
				// read the request: wait for it to arrive before counting.
				select {
				case <-arrived:
				case <-time.After(10 * time.Second):
				}
				if n := srv.hits.Load(); n != 1 {
					t.Errorf("sent %d times, want exactly once", n)
				}
				if len(*waits) != 0 {
					t.Errorf("waited %v", *waits)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) && !errors.Is(err, ErrOutcomeUnknown) {
					t.Errorf("a failure after sending is neither an APIError nor ErrOutcomeUnknown: %v", err)
				}
			})
		}
	}
}

// TestPrintOnceRetriesRefusedConnection: a dial failure proves nothing was sent.
func TestPrintOnceRetriesRefusedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{}`))
	})}
	var serveDone sync.WaitGroup
	defer func() { srv.Close(); serveDone.Wait() }()

	c, err := NewClient("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var attempts int
	c.sleep = func(ctx context.Context, d time.Duration) error {
		attempts++
		if attempts == 2 { // the printer comes back before the third attempt
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			serveDone.Add(1)
			go func() { defer serveDone.Done(); _ = srv.Serve(ln) }()
		}
		return nil
	}
	if _, err := c.Printers.PrintJob(t.Context(), "p", &PrintJob{LabelName: "L"}); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 || attempts != 2 {
		t.Errorf("server saw %d, client waited %d times", hits.Load(), attempts)
	}

	// A pure dial failure does not claim the printer may have the job.
	c2, _ := rtClient(t, "http://127.0.0.1:1", WithRetry(RetryPolicy{MaxAttempts: 2}))
	_, err = c2.Printers.Trigger(t.Context(), "p")
	var te *TransportError
	if !errors.As(err, &te) || te.MaybeSent || errors.Is(err, ErrOutcomeUnknown) || te.Attempts != 2 {
		t.Errorf("refused connection: %v (%+v)", err, te)
	}
}

// TestRetryAfter: honoured in both forms on retryable statuses; over the cap or the deadline
// the call returns at once.
func TestRetryAfter(t *testing.T) {
	// Far enough ahead that a slow machine still sees most of it, under the 30 s cap.
	date := time.Now().Add(12 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name, value string
		status      int
		min, max    time.Duration
	}{
		{"seconds on 503", "2", 503, 2 * time.Second, 2 * time.Second},
		{"seconds on 429", "1", 429, time.Second, time.Second},
		{"seconds on 500", "1", 500, time.Second, time.Second},
		{"HTTP date", date, 503, 5 * time.Second, 12 * time.Second},
		{"zero", "0", 503, 0, 0},
		{"garbage falls back to backoff", "soon", 503, 0, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", tc.value)
					w.WriteHeader(tc.status)
					return
				}
				w.Write([]byte(`{"triggers":1,"triggerBounces":0,"printedLabels":1}`))
			})
			c, waits := rtClient(t, srv.URL)
			if _, err := c.Printers.Counters(t.Context(), "p"); err != nil {
				t.Fatal(err)
			}
			if len(*waits) != 1 || (*waits)[0] < tc.min || (*waits)[0] > tc.max {
				t.Errorf("waits %v, want one in [%v, %v]", *waits, tc.min, tc.max)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		value string
		ctx   func() (context.Context, context.CancelFunc)
	}{
		{"over the cap", "31", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
		{"overflowing", "9223372037", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
		{"past the deadline", "5", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 2*time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tc.value)
				w.WriteHeader(503)
				w.Write([]byte(`{"message":"busy"}`))
			})
			c, waits := rtClient(t, srv.URL)
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := c.Printers.Counters(ctx, "p")
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Message != "busy" || apiErr.RetryAfter <= 0 {
				t.Errorf("err %v", err)
			}
			if srv.hits.Load() != 1 || len(*waits) != 0 {
				t.Errorf("%d requests, waits %v: want 1 and none", srv.hits.Load(), *waits)
			}
		})
	}
}

// TestRetryExhaustion: the caller gets the last APIError with its body, and non-retryable
// statuses are sent once.
func TestRetryExhaustion(t *testing.T) {
	for _, code := range []int{408, 429, 500, 502, 503, 504} {
		srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"message":"attempt %d"}`, n)
		})
		c, waits := rtClient(t, srv.URL)
		_, err := c.Labels.Get(t.Context(), "L")
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != code || apiErr.Message != "attempt 4" || apiErr.Attempts != 4 {
			t.Errorf("%d: %v", code, err)
		}
		if srv.hits.Load() != 4 || len(*waits) != 3 {
			t.Errorf("%d: %d requests, %d waits", code, srv.hits.Load(), len(*waits))
		}
		for i, w := range *waits {
			if ceiling := min(2*time.Second, 100*time.Millisecond<<i); w < 0 || w > ceiling {
				t.Errorf("%d: wait %d = %v outside [0, %v]", code, i, w, ceiling)
			}
		}
	}
	for _, code := range []int{400, 401, 403, 404, 409, 422, 501} {
		srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
		c, _ := rtClient(t, srv.URL)
		if err := c.Labels.Delete(t.Context(), "L"); err == nil || srv.hits.Load() != 1 {
			t.Errorf("%d: %v after %d requests", code, err, srv.hits.Load())
		}
	}
}

// TestBackoffBounds checks full jitter against its ceiling with extreme random values.
func TestBackoffBounds(t *testing.T) {
	c, err := NewClient("http://h")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{0, 0.5, 0.999999} {
		c.jitter = func() float64 { return r }
		prev := time.Duration(-1)
		for retry := 0; retry < 70; retry++ {
			d := c.backoff(retry)
			ceiling := 2 * time.Second
			if retry < 5 {
				ceiling = min(ceiling, 100*time.Millisecond<<retry)
			}
			if d < 0 || d > ceiling {
				t.Fatalf("r=%v retry %d: %v outside [0, %v]", r, retry, d, ceiling)
			}
			if r > 0.9 && d < prev {
				t.Errorf("r=%v: backoff decreased at retry %d", r, retry)
			}
			prev = d
		}
	}
}

// TestCancelDuringBackoff: the wait ends with the context, and the last answer stays reachable.
func TestCancelDuringBackoff(t *testing.T) {
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		w.Write([]byte(`{"message":"warming up"}`))
	})
	c, err := NewClient(srv.URL, WithRetry(RetryPolicy{MinWait: time.Hour, MaxWait: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.jitter = func() float64 { return 1 }
	ctx, cancel := context.WithCancel(t.Context())
	// Cancel 20 ms into the hour-long wait, however long the 503 took to arrive: a cancel
	// timed from the call's start could land before the answer on a loaded machine.
	wait := c.sleep
	c.sleep = func(ctx context.Context, d time.Duration) error {
		time.AfterFunc(20*time.Millisecond, cancel)
		return wait(ctx, d)
	}
	_, err = c.Labels.List(ctx)
	var apiErr *APIError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Errorf("err %v", err)
	}
	if srv.hits.Load() != 1 {
		t.Errorf("%d requests", srv.hits.Load())
	}

	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := c.Labels.List(done); !errors.Is(err, context.Canceled) || srv.hits.Load() != 1 {
		t.Errorf("cancelled before the call: %v, %d requests", err, srv.hits.Load())
	}
}

// TestUploadRewind: a seekable body is re-sent whole, a plain reader never twice.
func TestUploadRewind(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100_000)
	want := sha256.Sum256(data)
	var mu sync.Mutex
	var sums [][32]byte
	var lengths []int64
	srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		_, _ = io.Copy(h, r.Body)
		mu.Lock()
		sums = append(sums, [32]byte(h.Sum(nil)))
		lengths = append(lengths, r.ContentLength)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(503)
		}
	})
	c, _ := rtClient(t, srv.URL)
	if err := c.Images.Put(t.Context(), "i", bytes.NewReader(data), "image/png", nil); err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2 || sums[0] != want || sums[1] != want || lengths[0] != int64(len(data)) || lengths[1] != int64(len(data)) {
		t.Errorf("seeker upload: %d attempts, lengths %v", len(sums), lengths)
	}

	srv.hits.Store(0)
	sums, lengths = nil, nil
	pr, pw := io.Pipe()
	go func() { _, _ = pw.Write(data); pw.Close() }()
	err := c.Images.Put(t.Context(), "i", pr, "image/png", nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Errorf("plain reader upload: %v", err)
	}
	if len(sums) != 1 || sums[0] != want {
		t.Errorf("plain reader: %d attempts", len(sums))
	}
}

// TestRetryBudget: a printer that always fails stops being retried once the budget is spent.
func TestRetryBudget(t *testing.T) {
	fail := atomic.Bool{}
	fail.Store(true)
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(503)
			return
		}
		w.Write([]byte(`{}`))
	})
	c, _ := rtClient(t, srv.URL, WithRetry(RetryPolicy{Budget: 12}))
	ctx := t.Context()
	steps := []struct {
		wantRequests int64
		wantTokens   int
	}{{3, 2}, {1, 2}, {1, 2}}
	for i, s := range steps {
		before := srv.hits.Load()
		_, _ = c.Labels.List(ctx)
		if got := srv.hits.Load() - before; got != s.wantRequests || c.budget.available() != s.wantTokens {
			t.Errorf("step %d: %d requests, %d tokens; want %d and %d", i, got, c.budget.available(), s.wantRequests, s.wantTokens)
		}
	}
	fail.Store(false)
	for i := 0; i < 3; i++ {
		if _, err := c.Labels.List(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c.budget.available() != 5 {
		t.Errorf("after 3 successes: %d tokens, want 5", c.budget.available())
	}
	fail.Store(true)
	before := srv.hits.Load()
	_, _ = c.Labels.List(ctx)
	if got := srv.hits.Load() - before; got != 2 {
		t.Errorf("after refunds: %d requests, want 2", got)
	}
}

// TestConnectionReuse: sequential calls share one connection, on success and on small errors.
// TestRetryBudgetConcurrent: the budget neither over-spends nor over-fills when many
// goroutines take and refund at once (run under -race).
func TestRetryBudgetConcurrent(t *testing.T) {
	b := newRetryBudget(50)
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if b.take(retryCost) {
					granted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if granted.Load() != 50/retryCost || b.available() != 0 {
		t.Fatalf("%d takes granted from 50 tokens, %d left; want %d and 0", granted.Load(), b.available(), 50/retryCost)
	}
	for range 100 {
		wg.Add(1)
		go func() { defer wg.Done(); b.refund() }()
	}
	wg.Wait()
	if b.available() != 50 {
		t.Fatalf("100 refunds left %d tokens, want the capacity 50", b.available())
	}
}

// TestHeaderTimeoutRetriedForGET: a GET whose answer never starts is retried; a print is not
// (TestNoRetryForPrintOnce). The first two requests hang; a loaded machine can make a later
// answer miss the header timeout too, so it asserts that both hangs were retried and that
// every retry was paid for, not that the third attempt was the last.
func TestHeaderTimeoutRetriedForGET(t *testing.T) {
	srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		if n < 3 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		io.WriteString(w, `{}`)
	})
	tr := DefaultTransport()
	tr.ResponseHeaderTimeout = time.Second
	c, _ := rtClient(t, srv.URL, WithHTTPClient(&http.Client{Transport: tr}))
	_, err := c.Printers.Status(t.Context())
	hits := srv.hits.Load()
	if err != nil || hits < 3 {
		t.Errorf("err %v after %d requests, want success after both hangs were retried", err, hits)
	}
	if got, want := c.budget.available(), DefaultRetryPolicy().Budget-int(hits-1)*timeoutRetryCost+1; got != want {
		t.Errorf("budget %d after %d requests, want %d: timeout retries cost %d each", got, hits, want, timeoutRetryCost)
	}
}
