package labelprinter

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// zeros is an endless reader of zero bytes, so huge bodies cost no memory in the test.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// isTyped reports whether err is one of the SDK's typed errors.
func isTyped(err error) bool {
	var (
		apiErr *APIError
		de     *DecodeError
		te     *TransportError
		re     *RedirectError
	)
	return errors.As(err, &apiErr) || errors.As(err, &de) || errors.As(err, &te) || errors.As(err, &re)
}

// TestHostileResponses feeds every kind of broken answer to the documented decoders: each
// gives a typed error, within the deadline, with bounded memory, and never a zero-value success.
func TestHostileResponses(t *testing.T) {
	write := func(status int, body string, header ...string) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		want    func(error) bool
	}{
		{"short Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "200")
			io.WriteString(w, `{"triggers":1,`)
		}, isTyped},
		{"close-delimited truncation", func(w http.ResponseWriter, r *http.Request) {
			conn, buf, _ := http.NewResponseController(w).Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"triggers\":1,\"trigg")
			buf.Flush()
			conn.Close()
		}, isDecodeError},
		{"wrong types", write(200, `{"triggers":"3","triggerBounces":[],"printedLabels":{}}`), isDecodeError},
		{"fraction", write(200, `{"triggers":1.5}`), isDecodeError},
		{"out of range", write(200, `{"triggers":1e400}`), isDecodeError},
		{"array for object", write(200, `[1,2,3]`), isDecodeError},
		{"null", write(200, `null`), isDecodeError},
		{"empty 200", write(200, ``), isDecodeError},
		{"empty 204", write(204, ``), isDecodeError},
		{"HTML 200", write(200, `<html><body>Please log in</body></html>`, "Content-Type", "text/html"), isDecodeError},
		{"HTML 502", write(502, `<html><body>Bad Gateway</body></html>`, "Content-Type", "text/html"), isStatus(502)},
		{"trailing garbage", write(200, `{"triggers":1} {"triggers":2}`), isDecodeError},
		{"deep nesting", write(200, strings.Repeat(`{"a":`, 100_000)+"1"+strings.Repeat("}", 100_000)), isDecodeError},
		{"status 999", write(999, `{"message":"odd"}`), isStatus(999)},
		{"3xx without Location", write(300, `{}`), isStatus(300)},
		{"body over the cap", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10737418240")
			_, _ = io.CopyN(w, zeros{}, 10<<30)
		}, isTooLarge},
		{"endless chunked body", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(w, zeros{})
		}, isTooLarge},
		{"gzip bomb", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			gz, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
			_, _ = io.CopyN(gz, zeros{}, 1<<30)
			gz.Close()
		}, isTooLarge},
	}
	typed := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) { tc.handler(w, r) })
			c, _ := rtClient(t, srv.URL, WithMaxResponseBytes(1<<20), WithRetry(RetryPolicy{MaxAttempts: 1}))
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			pc, err := c.Printers.Counters(ctx, "p")
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("success with %+v", pc)
			}
			if pc != nil {
				t.Errorf("a result came back with the error: %+v", pc)
			}
			if !tc.want(err) {
				t.Errorf("error %T %v", err, err)
			} else {
				typed++
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 32<<20 {
				t.Errorf("allocated %d MiB for a 1 MiB cap", grown>>20)
			}
			c.Close()
			srv.CloseClientConnections()
		})
	}
	t.Logf("%d hostile responses, %d typed errors", len(cases), typed)
	if typed != len(cases) {
		t.Errorf("only %d of %d hostile responses gave the expected typed error", typed, len(cases))
	}
}

func isDecodeError(err error) bool {
	var de *DecodeError
	return errors.As(err, &de)
}

func isTooLarge(err error) bool { return errors.Is(err, ErrResponseTooLarge) && isDecodeError(err) }

func isStatus(code int) func(error) bool {
	return func(err error) bool {
		var apiErr *APIError
		return errors.As(err, &apiErr) && apiErr.StatusCode == code
	}
}

// TestHostileHistoryAndImages pins where decoding is strict and where lenient: a history with
// unequal arrays is a *DecodeError (no bucket can be read from it), while an image's unknown
// enum values are kept (the maker's pages are not a contract).
func TestHostileHistoryAndImages(t *testing.T) {
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info") {
			io.WriteString(w, `{"fileSize":10,"format":{"alpha":"MAGIC","bitsPerChannel":8,"channels":2,"colorSpace":"LAB"},"state":"QUEUED","intent":"NEW_INTENT"}`)
			return
		}
		io.WriteString(w, `{"time":[1,2,3],"count":[4]}`)
	})
	c, _ := rtClient(t, srv.URL)
	h, err := c.Printers.History(t.Context(), "p", nil)
	var de *DecodeError
	if !errors.As(err, &de) || h != nil || de.StatusCode != 200 || !strings.Contains(err.Error(), "3 times but 1 counts") {
		t.Fatalf("history %+v %v", h, err)
	}
	// A history built by hand is still checked by Buckets.
	if _, err := (&PrintHistory{Time: []int64{1, 2, 3}, Count: []int64{4}}).Buckets(); err == nil || !strings.Contains(err.Error(), "3 times but 1 counts") {
		t.Errorf("Buckets: %v", err)
	}
	info, err := c.Images.Info(t.Context(), "i")
	if err != nil || info.State != "QUEUED" || info.Format.Alpha != "MAGIC" || info.Format.ColorSpace != "LAB" || info.Intent != "NEW_INTENT" {
		t.Errorf("info %+v %v", info, err)
	}
}

// TestEmptyBodyEveryOperation pins an empty 2xx answer for each operation: the bodies the
// contract does not describe come back empty, the documented structs are a DecodeError.
func TestEmptyBodyEveryOperation(t *testing.T) {
	for _, status := range []int{200, 204} {
		srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(status)
		})
		c, _ := rtClient(t, srv.URL)
		ctx := t.Context()
		ok := map[string]error{}
		for name, call := range rtIdempotent {
			if name == "Printers.Status" {
				continue // a documented struct since it is typed: checked below
			}
			ok[name] = call(ctx, c)
		}
		for name, call := range rtPrintOnce {
			ok[name] = call(ctx, c)
		}
		for name, err := range ok {
			if err != nil {
				t.Errorf("%d: %s with an empty body: %v", status, name, err)
			}
		}
		_, err1 := c.Printers.Counters(ctx, "p")
		_, err2 := c.Printers.History(ctx, "p", nil)
		_, err3 := c.Images.Info(ctx, "i")
		_, err4 := c.Printers.Status(ctx)
		for i, err := range []error{err1, err2, err3, err4} {
			if !isDecodeError(err) {
				t.Errorf("%d: documented struct %d with an empty body: %v", status, i, err)
			}
		}
		if status == 200 {
			t.Logf("%d operations accept an empty 2xx body, 4 documented structs refuse it", len(ok))
		}
	}
}

// TestContentTypeIgnoredForJSON pins that JSON is decoded by content: a wrong or missing
// Content-Type with a valid body still decodes (printers are lax about it), and an HTML page is
// refused by the decoder, not by its header.
func TestContentTypeIgnoredForJSON(t *testing.T) {
	for _, ct := range []string{"", "text/html", "text/plain; charset=latin1", "application/octet-stream"} {
		srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = []string{ct}
			io.WriteString(w, `{"triggers":1,"triggerBounces":0,"printedLabels":1}`)
		})
		c, _ := rtClient(t, srv.URL)
		if pc, err := c.Printers.Counters(t.Context(), "p"); err != nil || pc.Triggers != 1 {
			t.Errorf("Content-Type %q: %+v %v", ct, pc, err)
		}
	}
}
