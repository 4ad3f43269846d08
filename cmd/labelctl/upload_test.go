package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// uploadSink is a printer's image upload that keeps nothing: it counts the bytes of each PUT
// and records how they were framed. With requireLength it answers 411 to a body of unknown
// length, as small embedded servers do.
type uploadSink struct {
	requireLength bool

	mu       sync.Mutex
	received int64
	length   int64 // the request's Content-Length, -1 when chunked
}

func (s *uploadSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/api/v3/images/") {
		http.NotFound(w, r)
		return
	}
	if s.requireLength && r.ContentLength < 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusLengthRequired)
		_, _ = io.WriteString(w, `{"message":"chunked request bodies are not supported"}`)
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.received, s.length = n, r.ContentLength
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pngPipe returns the read end of a pipe that carries a PNG signature and then n zero bytes,
// written from another goroutine as a shell pipe would; the returned func waits for the writer.
func pngPipe(t *testing.T, n int64) (*os.File, func()) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pw.Close()
		if _, err := pw.Write([]byte("\x89PNG\r\n\x1a\n")); err != nil {
			return
		}
		for left := n; left > 0; left -= int64(len(chunk)) {
			if _, err := pw.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
				return // the reader gave up; the test reports why
			}
		}
	}()
	return pr, func() { pr.Close(); <-done }
}

// TestUploadStdinStreams uploads 64 MiB from a pipe, with and without --size, and measures the
// heap: every byte allocated during the upload, client and server together, stays far below
// the body's size, so labelctl never holds stdin. With --size the body goes out with that
// Content-Length; without, chunked, and a printer that refuses chunked bodies gets an answer
// that names --size. Stdin redirected from a file goes with the file's length.
func TestUploadStdinStreams(t *testing.T) {
	const size = 64 << 20
	const pngSig = 8
	const bound = 8 << 20 // far below 64 MiB; io.ReadAll would allocate more than 64 MiB
	sink := &uploadSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	env := func(k string) string { return map[string]string{"LABELPRINTER_URL": srv.URL}[k] }

	for _, tc := range []struct {
		name       string
		args       []string
		wantLength int64
	}{
		{"unknown length", nil, -1},
		{"--size", []string{"--size", fmt.Sprint(size + pngSig)}, size + pngSig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, wait := pngPipe(t, size)
			defer wait()
			var out, errOut syncBuffer
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code := run(context.Background(), append([]string{"images", "put", "big", "-"}, tc.args...), pr, &out, &errOut, env)
			runtime.ReadMemStats(&after)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if want := fmt.Sprintf("uploaded image \"big\" (image/png, %d bytes)\n", size+pngSig); out.String() != want {
				t.Errorf("stdout %q, want %q", out.String(), want)
			}
			sink.mu.Lock()
			received, length := sink.received, sink.length
			sink.mu.Unlock()
			if received != size+pngSig || length != tc.wantLength {
				t.Errorf("the printer received %d bytes with Content-Length %d; want %d with %d", received, length, size+pngSig, tc.wantLength)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d MiB from a pipe: %.2f MiB allocated in all, heap in use %.2f MiB after", size>>20, float64(alloc)/(1<<20), float64(after.HeapInuse)/(1<<20))
			if alloc > bound {
				t.Errorf("the upload allocated %d bytes; want at most %d", alloc, bound)
			}
		})
	}

	t.Run("411", func(t *testing.T) {
		strict := httptest.NewServer(&uploadSink{requireLength: true})
		defer strict.Close()
		pr, wait := pngPipe(t, 1000)
		defer wait()
		var out, errOut syncBuffer
		code := run(context.Background(), []string{"images", "put", "logo", "-"}, pr, &out, &errOut, func(k string) string {
			return map[string]string{"LABELPRINTER_URL": strict.URL}[k]
		})
		want := "labelctl: PUT /api/v3/images/logo: 411 Length Required: chunked request bodies are not supported; stdin was sent chunked, as its length is unknown: pass --size with its length in bytes\n"
		if code != 1 || errOut.String() != want || out.String() != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1, %q", code, out.String(), errOut.String(), want)
		}
	})

	t.Run("stdin from a file", func(t *testing.T) {
		// "< logo.png": a regular file tells its length, so even a printer that refuses
		// chunked bodies takes it without --size.
		strict := &uploadSink{requireLength: true}
		srv := httptest.NewServer(strict)
		defer srv.Close()
		img := pngBytes(t, 40, 30)
		f, err := os.Open(writeFile(t, "logo.png", img))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out, errOut syncBuffer
		code := run(context.Background(), []string{"images", "put", "logo", "-"}, f, &out, &errOut, func(k string) string {
			return map[string]string{"LABELPRINTER_URL": srv.URL}[k]
		})
		strict.mu.Lock()
		received, length := strict.received, strict.length
		strict.mu.Unlock()
		if code != 0 || received != int64(len(img)) || length != int64(len(img)) {
			t.Errorf("exit %d (%s); received %d bytes with Content-Length %d, want %d", code, errOut.String(), received, length, len(img))
		}
	})

	t.Run("--size wrong", func(t *testing.T) {
		for _, declared := range []int64{100, 5000} {
			pr, wait := pngPipe(t, 1000)
			var out, errOut syncBuffer
			code := run(context.Background(), []string{"images", "put", "logo", "-", "--size", fmt.Sprint(declared)}, pr, &out, &errOut, env)
			wait()
			if code != 1 || !strings.Contains(errOut.String(), "declared bytes") || out.String() != "" {
				t.Errorf("--size %d for 1008 bytes: exit %d, stdout %q, stderr %q", declared, code, out.String(), errOut.String())
			}
		}
	})
}
