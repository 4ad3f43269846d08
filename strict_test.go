package labelprinter_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// strictServer behaves like the small HTTP/1.1 stack embedded in a printer controller. It
// reads requests off the socket itself instead of through net/http's server, which would
// quietly accept what such a stack refuses: it answers 411 to a chunked body and to a POST or
// PUT without Content-Length, and 400 when the body does not match its declared length (it
// ends early, or bytes follow it that do not form a request). Everything else is passed to
// the handler behind it. It keeps the bytes of every request it read, as they came.
type strictServer struct {
	URL string
	ln  net.Listener
	h   http.Handler

	mu    sync.Mutex
	wire  [][]byte // each request's head and body as read off the socket
	codes []int    // the status of each answer it gave itself (411, 400)
	conns sync.WaitGroup
}

func startStrict(t *testing.T, h http.Handler) *strictServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &strictServer{URL: "http://" + ln.Addr().String(), ln: ln, h: h}
	go s.accept()
	t.Cleanup(func() { ln.Close(); s.conns.Wait() })
	return s
}

func (s *strictServer) accept() {
	var (
		mu   sync.Mutex
		open = map[net.Conn]bool{}
	)
	defer func() {
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		open[c] = true
		mu.Unlock()
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			s.serveConn(c)
			c.Close()
			mu.Lock()
			delete(open, c)
			mu.Unlock()
		}()
	}
}

// serveConn answers requests on one keep-alive connection until it must close it.
func (s *strictServer) serveConn(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		head, err := readHead(br)
		if err != nil {
			if len(head) > 0 {
				s.refuse(c, head, http.StatusBadRequest, "malformed request head")
			}
			return
		}
		method, target, hdr, err := parseHead(head)
		if err != nil {
			s.refuse(c, head, http.StatusBadRequest, err.Error())
			return
		}
		if len(hdr.Values("Transfer-Encoding")) > 0 {
			s.refuse(c, head, http.StatusLengthRequired, "chunked request bodies are not supported")
			return
		}
		cl := hdr.Values("Content-Length")
		if len(cl) == 0 && (method == http.MethodPost || method == http.MethodPut) {
			s.refuse(c, head, http.StatusLengthRequired, method+" needs a Content-Length")
			return
		}
		var n int64
		if len(cl) > 0 {
			if n, err = strconv.ParseInt(cl[0], 10, 64); err != nil || n < 0 || len(cl) > 1 {
				s.refuse(c, head, http.StatusBadRequest, "bad Content-Length")
				return
			}
		}
		body := make([]byte, n)
		if got, err := io.ReadFull(br, body); err != nil {
			s.refuse(c, append(head, body[:got]...), http.StatusBadRequest, fmt.Sprintf("body ended after %d of its %d declared bytes", got, n))
			return
		}
		s.record(append(head, body...), 0)

		req := httptest.NewRequest(method, target, bytes.NewReader(body))
		req.Header = http.Header(hdr)
		req.Host = hdr.Get("Host") // httptest names example.com; the handler sees what was sent
		req.ContentLength = n
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if err := writeResponse(c, rec.Result()); err != nil {
			return
		}
		if strings.EqualFold(hdr.Get("Connection"), "close") {
			return
		}
	}
}

// readHead reads up to and including the blank line that ends a request head.
func readHead(br *bufio.Reader) ([]byte, error) {
	var head []byte
	for len(head) < 64<<10 {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if err != nil {
			return head, err
		}
		if len(line) == 2 && line[0] == '\r' || len(line) == 1 {
			return head, nil
		}
	}
	return head, errors.New("request head too long")
}

func parseHead(head []byte) (method, target string, hdr textproto.MIMEHeader, err error) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	line, err := tp.ReadLine()
	if err != nil {
		return "", "", nil, err
	}
	parts := strings.Split(line, " ")
	if len(parts) != 3 || parts[2] != "HTTP/1.1" || !strings.HasPrefix(parts[1], "/") {
		return "", "", nil, fmt.Errorf("bad request line %q", line)
	}
	hdr, err = tp.ReadMIMEHeader()
	if err != nil {
		return "", "", nil, err
	}
	return parts[0], parts[1], hdr, nil
}

func writeResponse(w io.Writer, resp *http.Response) error {
	body, _ := io.ReadAll(resp.Body)
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	resp.Header.Del("Content-Length")
	resp.Header.Del("Transfer-Encoding")
	_ = resp.Header.Write(&b)
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	_, err := w.Write(b.Bytes())
	return err
}

// refuse answers code itself, records it, and leaves the connection to be closed: after a
// refused body the stream no longer says where the next request starts.
func (s *strictServer) refuse(c net.Conn, wire []byte, code int, msg string) {
	s.record(wire, code)
	body := `{"message":` + strconv.Quote(msg) + `}`
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

func (s *strictServer) record(wire []byte, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wire = append(s.wire, bytes.Clone(wire))
	if code != 0 {
		s.codes = append(s.codes, code)
	}
}

// refused returns the statuses the server answered itself, in order.
func (s *strictServer) refused() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.codes...)
}

// lastRequest returns the bytes of the last request read, head and body.
func (s *strictServer) lastRequest() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.wire) == 0 {
		return nil
	}
	return s.wire[len(s.wire)-1]
}

// TestStrictServerDeselectOnTheWire checks the exact bytes DeselectJobs puts on the wire: an
// empty printJob is a POST with "Content-Length: 0", nothing chunked and no Content-Type.
func TestStrictServerDeselectOnTheWire(t *testing.T) {
	sim := printersim.New(printersim.WithPrinters("line1"))
	s := startStrict(t, sim)
	c, err := labelprinter.NewClient(s.URL, labelprinter.WithUserAgent("plant/7"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, printer := range []string{"line1", ""} {
		if _, err := c.Printers.DeselectJobs(t.Context(), printer); err != nil {
			t.Fatalf("DeselectJobs(%q): %v", printer, err)
		}
		path := "/api/v3/printJob"
		if printer != "" {
			path = "/api/v3/printers/" + printer + "/printJob"
		}
		want := "POST " + path + " HTTP/1.1\r\n" +
			"Host: " + strings.TrimPrefix(s.URL, "http://") + "\r\n" +
			"User-Agent: plant/7 go-labelprinter/devel\r\n" + // a test binary's build information says (devel)
			"Content-Length: 0\r\n" +
			"Accept: application/json\r\n" +
			"Accept-Encoding: gzip\r\n" +
			"\r\n"
		if got := string(s.lastRequest()); got != want {
			t.Errorf("DeselectJobs(%q) on the wire:\n%q\nwant\n%q", printer, got, want)
		}
	}
	if r := s.refused(); len(r) != 0 {
		t.Errorf("strict server refused %v", r)
	}
}

// TestStrictServerUnknownLength: an upload whose length nothing tells goes out chunked; the
// printer's 411 comes back as the *APIError, with what to do about it.
func TestStrictServerUnknownLength(t *testing.T) {
	sim := printersim.New()
	s := startStrict(t, sim)
	c, err := labelprinter.NewClient(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pr, pw := io.Pipe()
	img := e2ePNG(t, 4, 4)
	written := make(chan int, 1)
	go func() {
		n, _ := pw.Write(img)
		pw.Close()
		written <- n
	}()
	err = c.Images.Put(t.Context(), "logo", pr, "image/png", nil)
	pr.Close()
	// The SDK asked "Expect: 100-continue" and the 411 came first: not a byte of the body was read.
	if n := <-written; n != 0 {
		t.Errorf("%d bytes of the body were read before the 411", n)
	}
	var apiErr *labelprinter.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusLengthRequired {
		t.Fatalf("upload of unknown length: %v, want the 411 *APIError", err)
	}
	for _, hint := range []string{"ImagePutOptions.Size", "PutFile"} {
		if !strings.Contains(err.Error(), hint) {
			t.Errorf("411 error %q does not mention %s", err, hint)
		}
	}
	if got := s.refused(); len(got) != 1 || got[0] != http.StatusLengthRequired {
		t.Errorf("strict server answered %v, want one 411", got)
	}
	if len(sim.ImageNames()) != 0 {
		t.Errorf("images stored: %v", sim.ImageNames())
	}
}

// TestDeclaredSizeMismatch: a reader that ends before its declared Size, or holds more, is an
// error and the printer never receives a whole request, so no image is stored, truncated or
// not; the connection it used is not reused.
func TestDeclaredSizeMismatch(t *testing.T) {
	img := e2ePNG(t, 8, 8)
	for _, tc := range []struct {
		name string
		size int64
		want string
	}{
		{"ends early", int64(len(img)) + 10, "ended after"},
		{"bytes left over", int64(len(img)) - 10, "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := printersim.New()
			s := startStrict(t, sim)
			c, err := labelprinter.NewClient(s.URL, labelprinter.WithRetry(labelprinter.RetryPolicy{MinWait: time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err = c.Images.Put(ctx, "logo", io.MultiReader(bytes.NewReader(img)), "image/png", &labelprinter.ImagePutOptions{Size: tc.size})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "declared") {
				t.Fatalf("Put with Size %d for %d bytes: %v", tc.size, len(img), err)
			}
			if names := sim.ImageNames(); len(names) != 0 {
				t.Errorf("an image was stored: %v", names)
			}
			// The next call works, on a new connection.
			if _, err := c.Printers.Counters(ctx, ""); err != nil {
				t.Errorf("next call: %v", err)
			}
			if got := sim.Requests("PUT", "/api/v3/images/{name}"); got != 0 {
				t.Errorf("the simulator saw %d uploads; the strict server should have refused the short body", got)
			}
		})
	}
}
