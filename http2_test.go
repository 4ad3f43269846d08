package labelprinter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// uploadServer records, for every PUT, the protocol, the Expect header (Go's HTTP/1 server
// keeps it; its HTTP/2 server drops it) and the body that arrived.
type uploadServer struct {
	*httptest.Server
	mu      sync.Mutex
	protos  []int
	expects []string
	bodies  [][]byte
}

func startUploadServer(t *testing.T, http2, useTLS bool) *uploadServer {
	t.Helper()
	s := &uploadServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			io.WriteString(w, `{}`)
			return
		}
		expect := r.Header.Get("Expect")
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.protos = append(s.protos, r.ProtoMajor)
		s.expects = append(s.expects, expect)
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	s.EnableHTTP2 = http2
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// last returns what the server recorded for the latest PUT.
func (s *uploadServer) last(t *testing.T) (proto int, expect string, body []byte) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.protos) == 0 {
		t.Fatal("no upload arrived")
	}
	i := len(s.protos) - 1
	return s.protos[i], s.expects[i], s.bodies[i]
}

// uploadUnknownLength sends data through a reader that tells no length, and reports whether
// net/http held the body back to wait for "100 Continue".
func uploadUnknownLength(t *testing.T, c *Client, data []byte) (waited bool) {
	t.Helper()
	var waits atomic.Int32
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		Wait100Continue: func() { waits.Add(1) },
	})
	if err := c.Images.Put(ctx, "logo", io.MultiReader(bytes.NewReader(data)), "image/png", nil); err != nil {
		t.Fatal(err)
	}
	return waits.Load() > 0
}

// TestUploadUnknownLengthHTTP2: over HTTP/2 an upload of unknown length never waits for a "100
// Continue" (nginx does not send one, and net/http would hold the body for the whole
// ExpectContinueTimeout): not as the Client's first request, not after the printer answered.
// The transport's ExpectContinueTimeout is an hour, so a wait could not pass unnoticed.
func TestUploadUnknownLengthHTTP2(t *testing.T) {
	srv := startUploadServer(t, true, true)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = time.Hour
	c, _ := rtClient(t, srv.URL, WithHTTPClient(&http.Client{Transport: tr}))
	data := bytes.Repeat([]byte("\x89PNG-h2-"), 4096)
	for i, first := range []bool{true, false} {
		if !first {
			if _, err := c.Labels.List(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if uploadUnknownLength(t, c, data) {
			t.Errorf("upload %d (first request: %v) waited for 100 Continue over HTTP/2", i, first)
		}
		proto, _, body := srv.last(t)
		if proto != 2 || !bytes.Equal(body, data) {
			t.Errorf("upload %d arrived over HTTP/%d with %d of %d bytes", i, proto, len(body), len(data))
		}
	}
}

// TestUploadUnknownLengthHTTP1: over HTTP/1.1 the upload still asks "Expect: 100-continue",
// so a printer that refuses chunked bodies can answer 411 before the body goes out (see
// TestStrictServerUnknownLength for the 411 itself): on plain http from the first request,
// over TLS once the printer has answered over HTTP/1.1 (before that, ALPN may pick HTTP/2).
func TestUploadUnknownLengthHTTP1(t *testing.T) {
	data := bytes.Repeat([]byte("\x89PNG-h1-"), 4096)
	for _, useTLS := range []bool{false, true} {
		srv := startUploadServer(t, false, useTLS)
		var opts []Option
		if useTLS {
			opts = append(opts, WithHTTPClient(srv.Client()))
		}
		c, _ := rtClient(t, srv.URL, opts...)
		if !useTLS {
			uploadUnknownLength(t, c, data)
			if proto, expect, body := srv.last(t); proto != 1 || expect != "100-continue" || !bytes.Equal(body, data) {
				t.Errorf("plain http, first request: HTTP/%d, Expect %q, %d of %d bytes", proto, expect, len(body), len(data))
			}
			continue
		}
		if _, err := c.Labels.List(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !uploadUnknownLength(t, c, data) {
			t.Error("TLS HTTP/1.1: the upload did not wait for the printer's go-ahead")
		}
		if proto, expect, body := srv.last(t); proto != 1 || expect != "100-continue" || !bytes.Equal(body, data) {
			t.Errorf("TLS HTTP/1.1: HTTP/%d, Expect %q, %d of %d bytes", proto, expect, len(body), len(data))
		}
	}
}
