package printersim

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange writes req as is on a new connection to srv and returns the status line of the
// answer, so requests net/http's client would never send can be tried. With halfClose the
// writing side is closed after req, as a client that dies mid-body does.
func rawExchange(t *testing.T, srv *Server, req string, halfClose bool) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		_ = c.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.Status
}

func TestRequireContentLength(t *testing.T) {
	const (
		chunked   = "POST /api/v3/printers/line1/trigger HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
		noLength  = "POST /api/v3/printers/line1/abortPrint HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
		zeroBody  = "POST /api/v3/printers/line1/abortPrint HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
		putChunk  = "PUT /api/v3/labels/L HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
		shortBody = "PUT /api/v3/labels/L HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{}"
		getNoLen  = "GET /api/v3/printCounters HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	)
	for _, tc := range []struct {
		name            string
		req             string
		strict, lenient string
	}{
		{"chunked POST", chunked, "411 Length Required", "409 Conflict"},
		{"POST without Content-Length", noLength, "411 Length Required", "200 OK"},
		{"POST with Content-Length: 0", zeroBody, "200 OK", "200 OK"},
		{"chunked PUT", putChunk, "411 Length Required", "204 No Content"},
		{"body shorter than declared", shortBody, "400 Bad Request", "400 Bad Request"},
		{"GET without Content-Length", getNoLen, "200 OK", "200 OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, strict := range []bool{true, false} {
				var opts []Option
				want := tc.lenient
				if strict {
					opts, want = []Option{WithRequireContentLength()}, tc.strict
				}
				srv, err := Start(opts...)
				if err != nil {
					t.Fatal(err)
				}
				got := rawExchange(t, srv, tc.req, tc.req == shortBody)
				srv.Close()
				if got != want {
					t.Errorf("strict=%v: %s, want %s", strict, got, want)
				}
			}
		})
	}
}
