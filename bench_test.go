package labelprinter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Each benchmark pairs the SDK ("sdk") with the hand-written net/http code an integrator would
// write instead ("raw"), with the same transport settings, against the same loopback server
// in the same run. scripts/bench compares the pairs with benchstat.

const benchCounters = `{"triggers":123456,"triggerBounces":12,"printedLabels":123444}`

func benchServer(b *testing.B, h http.HandlerFunc) *httptest.Server {
	b.Helper()
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv
}

func benchClients(b *testing.B, url string) (*Client, *http.Client) {
	b.Helper()
	c, err := NewClient(url)
	if err != nil {
		b.Fatal(err)
	}
	raw := &http.Client{Transport: DefaultTransport()}
	b.Cleanup(func() { c.Close(); raw.CloseIdleConnections() })
	return c, raw
}

// runPair runs one comparison as the sub-benchmarks prefix+"impl=sdk" and prefix+"impl=raw",
// the SDK first unless LABELPRINTER_BENCH_ORDER is "raw-first". go test repeats each
// sub-benchmark -count times in a row, and on a 2-core loopback the side that runs second is
// measurably slower, so scripts/bench runs the binary once per repetition with the order
// alternating: a fixed order would tilt every pair the same way.
func runPair(b *testing.B, prefix string, sdk, raw func(b *testing.B)) {
	if os.Getenv("LABELPRINTER_BENCH_ORDER") == "raw-first" {
		b.Run(prefix+"impl=raw", raw)
		b.Run(prefix+"impl=sdk", sdk)
		return
	}
	b.Run(prefix+"impl=sdk", sdk)
	b.Run(prefix+"impl=raw", raw)
}

// rawGet is the request half of a careful hand-written call: a GET asking for JSON, where any
// status but 200 is an error. The caller closes the body.
func rawGet(ctx context.Context, hc *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp, nil
}

// rawCounters is what a careful hand-written call looks like.
func rawCounters(ctx context.Context, hc *http.Client, url string) (*PrintCounters, error) {
	resp, err := rawGet(ctx, hc, url+"/api/v3/printers/line1/printCounters")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Triggers       int64 `json:"triggers"`
		TriggerBounces int64 `json:"triggerBounces"`
		PrintedLabels  int64 `json:"printedLabels"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	return &PrintCounters{out.Triggers, out.TriggerBounces, out.PrintedLabels}, nil
}

func BenchmarkCounters(b *testing.B) {
	srv := benchServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, benchCounters)
	})
	c, raw := benchClients(b, srv.URL)
	ctx := context.Background()
	sdk := func() error { _, err := c.Printers.Counters(ctx, "line1"); return err }
	hand := func() error { _, err := rawCounters(ctx, raw, srv.URL); return err }
	runPair(b, "mode=sequential/", sequential(sdk), sequential(hand))
	runPair(b, "mode=parallel/", parallel(sdk), parallel(hand))
}

// sequential benchmarks call in a loop on one goroutine.
func sequential(call func() error) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// parallel benchmarks call from GOMAXPROCS goroutines sharing one Client or http.Client.
func parallel(call func() error) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := call(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
}

// rawJob is the struct an integrator would marshal by hand.
type rawJob struct {
	TableName   string `json:"tableName"`
	KeyColumn   string `json:"keyColumn"`
	Key         string `json:"key"`
	LabelColumn string `json:"labelColumn"`
	Copies      int    `json:"copies"`
	Queue       bool   `json:"queue"`
}

func BenchmarkPrintJob(b *testing.B) {
	srv := benchServer(b, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"printer":"line1","queueLength":1}`)
	})
	c, raw := benchClients(b, srv.URL)
	ctx := context.Background()
	job := &PrintJob{TableName: "Products", KeyColumn: "SKU", Key: "S12-342C", LabelColumn: "Label", Copies: 1, Queue: Ptr(true)}
	sdk := func() error { _, err := c.Printers.PrintJob(ctx, "line1", job); return err }
	hand := func() error { return rawPrintJob(ctx, raw, srv.URL, job) }
	runPair(b, "mode=sequential/", sequential(sdk), sequential(hand))
	runPair(b, "mode=parallel/", parallel(sdk), parallel(hand))
}

// rawPrintJob is the hand-written print call, the answer read and checked like the SDK's.
func rawPrintJob(ctx context.Context, hc *http.Client, url string, job *PrintJob) error {
	body, err := json.Marshal(rawJob{TableName: job.TableName, KeyColumn: job.KeyColumn, Key: job.Key, LabelColumn: job.LabelColumn, Copies: job.Copies, Queue: true})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/api/v3/printers/line1/printJob", bytes.NewReader(body))
	if err != nil {
		return err
	}
	// The same headers on the wire as the SDK's, as in rawCounters (net/http adds its own
	// User-Agent): on loopback every header the server parses shows in the timing, and a raw
	// side that sends fewer would measure headers, not the SDK.
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !json.Valid(out) {
		return fmt.Errorf("status %d, body %q", resp.StatusCode, out)
	}
	return nil
}

// cannedTransport answers every request at once with body, after reading the request's body.
type cannedTransport struct{ body string }

func (t cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		ContentLength: int64(len(t.body)),
		Body:          io.NopCloser(strings.NewReader(t.body)),
		Request:       r,
	}, nil
}

// BenchmarkOverhead pairs the same calls over an in-memory transport: no sockets, no scheduler
// hand-offs, so what remains is the CPU each side spends on a call, steady to a few percent
// where loopback timings move by more than the SDK's whole cost.
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	job := &PrintJob{TableName: "Products", KeyColumn: "SKU", Key: "S12-342C", LabelColumn: "Label", Copies: 1, Queue: Ptr(true)}
	for _, tc := range []struct {
		op, body  string
		sdk, hand func(c *Client, hc *http.Client) error
	}{
		{"Counters", benchCounters,
			func(c *Client, _ *http.Client) error { _, err := c.Printers.Counters(ctx, "line1"); return err },
			func(_ *Client, hc *http.Client) error { _, err := rawCounters(ctx, hc, "http://printer"); return err }},
		{"PrintJob", `{"printer":"line1","queueLength":1}`,
			func(c *Client, _ *http.Client) error { _, err := c.Printers.PrintJob(ctx, "line1", job); return err },
			func(_ *Client, hc *http.Client) error { return rawPrintJob(ctx, hc, "http://printer", job) }},
	} {
		hc := &http.Client{Transport: cannedTransport{tc.body}}
		c, err := NewClient("http://printer", WithHTTPClient(hc))
		if err != nil {
			b.Fatal(err)
		}
		runPair(b, "op="+tc.op+"/",
			sequential(func() error { return tc.sdk(c, hc) }),
			sequential(func() error { return tc.hand(c, hc) }))
	}
}

// benchHistory returns a history body with n buckets.
func benchHistory(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"time":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Itoa(1_700_000_000 + 60*i))
	}
	buf.WriteString(`],"count":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Itoa(i % 97))
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

func BenchmarkHistoryDecode(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		body := benchHistory(n)
		runPair(b, fmt.Sprintf("buckets=%d/", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var h PrintHistory
				if err := json.Unmarshal(body, &h); err != nil || len(h.Time) != n {
					b.Fatal(err)
				}
			}
		}, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var h struct{ Time, Count []int64 }
				if err := json.Unmarshal(body, &h); err != nil || len(h.Time) != n {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBuckets(b *testing.B) {
	var h PrintHistory
	if err := json.Unmarshal(benchHistory(10_000), &h); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Buckets(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchImageBytes is the image size moved by the image benchmarks (256 MiB unless
// LABELPRINTER_BENCH_IMAGE_MB says otherwise).
func benchImageBytes() int64 {
	if mb, err := strconv.Atoi(os.Getenv("LABELPRINTER_BENCH_IMAGE_MB")); err == nil && mb > 0 {
		return int64(mb) << 20
	}
	return 256 << 20
}

// onlyReader hides every method but Read, like a pipe or a network stream.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// measureAllocs runs f b.N times and reports the bytes allocated per byte moved.
func measureAllocs(b *testing.B, moved int64, f func()) {
	b.Helper()
	b.SetBytes(moved)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		f()
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(moved), "allocB/B")
}

func BenchmarkImageUpload(b *testing.B) {
	size := benchImageBytes()
	srv := benchServer(b, func(w http.ResponseWriter, r *http.Request) {
		if n, _ := io.Copy(io.Discard, r.Body); n != size {
			w.WriteHeader(400)
			return
		}
		w.WriteHeader(204)
	})
	c, raw := benchClients(b, srv.URL)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "image.png")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	// A PNG signature, so PutFile recognises the file, then zeros.
	if _, err := io.WriteString(f, "\x89PNG\r\n\x1a\n"); err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, zeros{}, size-8); err != nil {
		b.Fatal(err)
	}
	f.Close()
	rawPut := func(body io.Reader, length int64) {
		req, err := http.NewRequestWithContext(ctx, "PUT", srv.URL+"/api/v3/images/big", body)
		if err != nil {
			b.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", "image/png")
		resp, err := raw.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 {
			b.Fatal(resp.Status)
		}
	}
	runPair(b, "src=file/", func(b *testing.B) {
		measureAllocs(b, size, func() {
			if err := c.Images.PutFile(ctx, "big", path, nil); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		measureAllocs(b, size, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			rawPut(f, size)
			f.Close()
		})
	})
	runPair(b, "src=reader/", func(b *testing.B) {
		measureAllocs(b, size, func() {
			if err := c.Images.Put(ctx, "big", onlyReader{io.LimitReader(zeros{}, size)}, "image/png", nil); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		measureAllocs(b, size, func() { rawPut(onlyReader{io.LimitReader(zeros{}, size)}, -1) })
	})
	// A reader of declared length (ImagePutOptions.Size) goes out with Content-Length, through
	// the reader that holds the last byte back until it has seen the body end.
	runPair(b, "src=reader-size/", func(b *testing.B) {
		measureAllocs(b, size, func() {
			if err := c.Images.Put(ctx, "big", onlyReader{io.LimitReader(zeros{}, size)}, "image/png", &ImagePutOptions{Size: size}); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		measureAllocs(b, size, func() { rawPut(onlyReader{io.LimitReader(zeros{}, size)}, size) })
	})
}

func BenchmarkImageDownload(b *testing.B) {
	size := benchImageBytes()
	srv := benchServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		_, _ = io.CopyN(w, zeros{}, size)
	})
	c, raw := benchClients(b, srv.URL)
	ctx := context.Background()
	dir := b.TempDir()
	runPair(b, "", func(b *testing.B) {
		measureAllocs(b, size, func() {
			f, err := os.Create(filepath.Join(dir, "sdk.png"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Images.Download(ctx, "big", f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		})
	}, func(b *testing.B) {
		measureAllocs(b, size, func() {
			f, err := os.Create(filepath.Join(dir, "raw.png"))
			if err != nil {
				b.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v3/images/big", nil)
			resp, err := raw.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, err = io.Copy(f, resp.Body)
			resp.Body.Close()
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
		})
	})
}

// TestConnectionsUnderConcurrency: 128 goroutines making 10 000 calls through one Client, on the
// SDK's default transport, never hold more than 64 connections at once (twice as many callers
// as connections, so the cap is what holds them), and keep them alive instead of dialing one
// per call.
//
// Connections are counted on the client's side, from a successful dial to Close: the server
// learns of a close only when it next reads the socket, which under load can come after the
// client has dialed a replacement, so a server-side count can see 65 without the client ever
// holding 65. net/http frees a connection's slot just before it closes the socket, so a dial
// that finds 64 open waits (up to a generous bound) for that close instead of counting it.
func TestConnectionsUnderConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("10 000 calls")
	}
	const goroutines, maxConns, calls = 128, 64, 10_000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, benchCounters)
	}))
	defer srv.Close()

	var dials, over atomic.Int64
	var waiting sync.WaitGroup             // dials waiting for a slot
	slots := make(chan struct{}, maxConns) // one per connection the client holds
	tr := DefaultTransport()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		dials.Add(1)
		waiting.Add(1)
		defer waiting.Done()
		held := true
		select {
		case slots <- struct{}{}:
		case <-time.After(10 * time.Second):
			// 64 connections stayed open for 10 s while this one was dialed: a 65th.
			over.Add(1)
			held = false
		}
		return &countedConn{Conn: conn, release: func() {
			if held {
				<-slots
			}
		}}, nil
	}
	c, err := NewClient(srv.URL, WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var fresh atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused {
				fresh.Add(1)
			}
		},
	})
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= calls {
				if _, err := c.Printers.Counters(ctx, "line1"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	waiting.Wait() // a dial still waiting for a slot either gets one or is counted over
	if over.Load() > 0 {
		t.Errorf("%d goroutines held more than %d connections at once (%d dials found every slot taken)", goroutines, maxConns, over.Load())
	}
	// Only a failed dial or a dropped connection is replaced, and loopback drops none: far more
	// than the cap means connections are thrown away instead of kept alive.
	if dials.Load() > 2*maxConns || fresh.Load() > 2*maxConns {
		t.Errorf("%d calls dialed %d connections (%d fresh per httptrace), want connections kept alive", calls, dials.Load(), fresh.Load())
	}
	t.Logf("%d goroutines, %d calls, %d connections dialed", goroutines, calls, dials.Load())
}

// countedConn releases its slot once, on its first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
