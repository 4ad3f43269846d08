package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// stallSignal wraps each response body and reports, once per body, that the reader came back
// for more after the first bytes: the read that waits for a body that does not come.
type stallSignal struct {
	next    http.RoundTripper
	waiting chan<- struct{}
}

func (s stallSignal) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil {
		resp.Body = &stallBody{ReadCloser: resp.Body, waiting: s.waiting}
	}
	return resp, err
}

type stallBody struct {
	io.ReadCloser
	waiting chan<- struct{}
	got     int
	fired   bool
}

func (b *stallBody) Read(p []byte) (int, error) {
	if b.got > 0 && !b.fired {
		b.fired = true
		b.waiting <- struct{}{}
	}
	n, err := b.ReadCloser.Read(p)
	b.got += n
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
	hc := h.defaultModule().hc
	hc.Transport = stallSignal{next: hc.Transport, waiting: waiting}

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
