package labelprinter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestResponseCap: a body over the cap fails without being read whole.
func TestResponseCap(t *testing.T) {
	var written atomic.Int64
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10737418240")
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for i := 0; i < 10<<10; i++ {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	c, _ := rtClient(t, srv.URL, WithMaxResponseBytes(1<<20))
	_, err := c.Labels.List(t.Context())
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("err %v", err)
	}
	c.Close()
	srv.CloseClientConnections()
}

// TestCancelDuringRequest: a context cancelled while the printer holds the request ends the
// call with the context's error and no retry.
func TestCancelDuringRequest(t *testing.T) {
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c, waits := rtClient(t, srv.URL)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Labels.List(ctx)
	if !errors.Is(err, context.Canceled) || srv.hits.Load() != 1 || len(*waits) != 0 {
		t.Errorf("err %v after %d requests and %d waits", err, srv.hits.Load(), len(*waits))
	}
}

// trackingTransport counts response bodies opened and closed.
type trackingTransport struct {
	rt             http.RoundTripper
	opened, closed atomic.Int64
}

type trackedBody struct {
	io.ReadCloser
	once sync.Once
	tr   *trackingTransport
}

func (b *trackedBody) Close() error {
	b.once.Do(func() { b.tr.closed.Add(1) })
	return b.ReadCloser.Close()
}

func (t *trackingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil {
		t.opened.Add(1)
		resp.Body = &trackedBody{ReadCloser: resp.Body, tr: t}
	}
	return resp, err
}

// TestBodiesClosed: every response body is closed on every path.
func TestBodiesClosed(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer other.Close()
	srv := rtStart(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/labels/ok":
			io.WriteString(w, `{}`)
		case "/api/v3/labels/retry":
			if n%2 == 1 {
				w.WriteHeader(503)
			}
			io.WriteString(w, `{}`)
		case "/api/v3/labels/gone":
			w.WriteHeader(404)
		case "/api/v3/printCounters":
			io.WriteString(w, `{"triggers":"x"}`)
		case "/api/v3/labels/big":
			_, _ = io.CopyN(w, zeros{}, 4<<20)
		case "/api/v3/labels/away":
			http.Redirect(w, r, other.URL, http.StatusFound)
		}
	})
	tr := &trackingTransport{rt: DefaultTransport()}
	c, _ := rtClient(t, srv.URL, WithHTTPClient(&http.Client{Transport: tr}), WithMaxResponseBytes(1<<20))
	ctx := t.Context()
	for _, name := range []string{"ok", "retry", "gone", "big", "away"} {
		_, _ = c.Labels.Get(ctx, name)
	}
	_, _ = c.Printers.Counters(ctx, "")
	_, _ = c.Images.Download(ctx, "x", io.Discard)
	if tr.opened.Load() == 0 || tr.opened.Load() != tr.closed.Load() {
		t.Errorf("%d bodies opened, %d closed", tr.opened.Load(), tr.closed.Load())
	}
	t.Logf("%d response bodies opened, %d closed", tr.opened.Load(), tr.closed.Load())
}
