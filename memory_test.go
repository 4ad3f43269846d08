package labelprinter

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stallSignal wraps each response body and counts the bodies whose reader has come back for
// more after the first bytes: the call is then waiting for bytes that do not come.
type stallSignal struct {
	rt      http.RoundTripper
	waiting atomic.Int64
	ch      chan struct{}
}

func (s *stallSignal) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &stallBody{ReadCloser: resp.Body, s: s}
	}
	return resp, err
}

type stallBody struct {
	io.ReadCloser
	s     *stallSignal
	got   int
	fired bool
}

func (b *stallBody) Read(p []byte) (int, error) {
	if b.got > 0 && !b.fired {
		b.fired = true
		b.s.waiting.Add(1)
		b.s.ch <- struct{}{}
	}
	n, err := b.ReadCloser.Read(p)
	b.got += n
	return n, err
}

// TestDeclaredLengthReservesNothing: 8 Counters calls to a server that declares 60 MiB, sends 6
// bytes and stalls hold well under 16 MiB of heap while they wait, with the default cap and
// with caps no body can reach (1<<40, math.MaxInt64).
func TestDeclaredLengthReservesNothing(t *testing.T) {
	const calls, declared, bound = 8, 60 << 20, 16 << 20
	for _, limit := range []int64{0, 1 << 40, math.MaxInt64} {
		t.Run(strconv.FormatInt(limit, 10), func(t *testing.T) {
			release := make(chan struct{})
			srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(declared))
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, `{"trig`)
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			sig := &stallSignal{rt: DefaultTransport(), ch: make(chan struct{}, calls)}
			opts := []Option{WithHTTPClient(&http.Client{Transport: sig}), WithRetry(RetryPolicy{MaxAttempts: 1})}
			if limit > 0 {
				opts = append(opts, WithMaxResponseBytes(limit))
			}
			c, _ := rtClient(t, srv.URL, opts...)

			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)

			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			errs := make(chan error, calls)
			for range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := c.Printers.Counters(ctx, "line1")
					errs <- err
				}()
			}
			// Every call has read the 6 bytes and asked for more: what it reserved, it holds now.
			failAfter := time.After(time.Minute)
			for range calls {
				select {
				case <-sig.ch:
				case err := <-errs:
					cancel()
					t.Fatalf("a call ended before the body stalled: %v", err)
				case <-failAfter:
					t.Fatalf("only %d of %d calls reached the stalled body", sig.waiting.Load(), calls)
				}
			}
			runtime.GC()
			var during runtime.MemStats
			runtime.ReadMemStats(&during)
			held := int64(during.HeapAlloc) - int64(before.HeapAlloc)
			cancel()
			wg.Wait()
			close(release)
			close(errs)
			for err := range errs {
				if err == nil || !errors.Is(err, context.Canceled) {
					t.Errorf("a stalled call ended with %v, want the context's error", err)
				}
			}
			t.Logf("%d calls waiting on a declared %d MiB body hold %.2f MiB of heap", calls, declared>>20, float64(held)/(1<<20))
			if held > bound {
				t.Errorf("%d waiting calls hold %d MiB of heap, want under %d MiB", calls, held>>20, bound>>20)
			}
		})
	}
}

// TestMaxResponseBytesAtMaxInt64: the largest cap works like any other (it overflowed once,
// and every JSON read failed with "empty body").
func TestMaxResponseBytesAtMaxInt64(t *testing.T) {
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"triggers":3,"triggerBounces":1,"printedLabels":2}`)
	})
	for _, limit := range []int64{1, 50, 51, math.MaxInt64 - 1, math.MaxInt64} {
		c, _ := rtClient(t, srv.URL, WithMaxResponseBytes(limit))
		got, err := c.Printers.Counters(t.Context(), "line1")
		switch {
		case limit < 51:
			if !errors.Is(err, ErrResponseTooLarge) {
				t.Errorf("cap %d: a 51-byte body gave %v, want ErrResponseTooLarge", limit, err)
			}
		case err != nil || got.PrintedLabels != 2:
			t.Errorf("cap %d: %+v %v", limit, got, err)
		}
	}
}
