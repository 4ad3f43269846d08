package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// stallConn reports, once, that the client came back for more bytes after it had the response
// headers and the first body bytes: the read that waits for a body that does not come.
type stallConn struct {
	net.Conn
	seen    []byte
	fired   bool
	waiting chan<- struct{}
}

func (c *stallConn) Read(p []byte) (int, error) {
	if !c.fired {
		if i := bytes.Index(c.seen, []byte("\r\n\r\n")); i >= 0 && len(c.seen)-i-4 >= 6 {
			c.fired = true
			c.waiting <- struct{}{}
		}
	}
	n, err := c.Conn.Read(p)
	if !c.fired {
		c.seen = append(c.seen, p[:n]...)
	}
	return n, err
}

// TestProbesHoldWhatArrived: 12 concurrent probes of a printer that declares a 60 MiB status
// body, sends 6 bytes and stalls hold well under 16 MiB of heap while they wait (they held 60 MiB
// each, 720 MiB in all, while the SDK sized its buffer from Content-Length).
func TestProbesHoldWhatArrived(t *testing.T) {
	const probes, declared, bound = 12, 60 << 20, 16 << 20
	release := make(chan struct{})
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	printer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(declared))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"stat`)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer printer.Close()
	defer releaseAll()
	h := newHarness(t, nil)
	waiting := make(chan struct{}, probes)
	dial := h.e.transport.DialContext
	h.e.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallConn{Conn: conn, waiting: waiting}, nil
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var wg sync.WaitGroup
	for range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, body := h.get("/probe?target="+url.QueryEscape(printer.URL), "X-Prometheus-Scrape-Timeout-Seconds", "600")
			if code != http.StatusOK {
				t.Errorf("probe: %d %s", code, body)
			}
		}()
	}
	failAfter := time.After(20 * time.Second)
	for i := range probes {
		select {
		case <-waiting:
		case <-failAfter:
			t.Fatalf("only %d of %d probes reached the stalled body", i, probes)
		}
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	held := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	releaseAll()
	wg.Wait()
	t.Logf("%d probes waiting on a declared %d MiB body hold %.2f MiB of heap", probes, declared>>20, float64(held)/(1<<20))
	if held > bound {
		t.Errorf("%d waiting probes hold %d MiB of heap, want under %d MiB", probes, held>>20, bound>>20)
	}
}
