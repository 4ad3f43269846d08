package examples_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// goTool finds the go command; go test puts its own first on PATH, so the examples build with
// the toolchain that runs the tests.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the examples with")
	}
	return p
}

// TestExamples builds every example and runs it against the simulator it starts itself, as a
// reader would with "go run ./examples/NAME"; quickstart also runs against a "real printer"
// (-url pointing at a simulator the test starts), where without -allow-writes it must send
// nothing but reads.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin := t.TempDir()
	build := exec.Command(goTool(t), "build", "-o", bin+string(os.PathSeparator), "./...")
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}

	cases := []struct {
		name string
		args []string
		// interruptAt, when set, sends Ctrl-C once stdout has this many lines (for examples that
		// run until stopped): an event, not a time, so a slow machine cannot stop it too early.
		interruptAt int
		want        []string
		// printer, when set, is given to the example as -url: a simulator the test starts and
		// watches, whose requests (method and path) check gets afterwards.
		printer bool
		check   func(t *testing.T, requests []string)
	}{
		{name: "quickstart", want: []string{
			"uploaded image quickstart-logo", "image is READY", "stored label", "stored table",
			"simulation for S12-342C", "selected the print job", "trigger 1:", "trigger 2:",
			"counters:", "labels printed", "history:", "deselected every job", "deleted the table", "done",
		}},
		{name: "quickstart", args: []string{"-printer", "line1"}, printer: true, want: []string{
			"printer status:", "stored on the printer: 0 label(s), 0 image(s), 0 table(s)", "counters: 0 triggers",
			"history: 0 labels", "left out on this printer", "deselecting every job on line1",
			"Run again with -allow-writes", "done",
		}, check: func(t *testing.T, requests []string) {
			if len(requests) == 0 {
				t.Error("no request reached the printer")
			}
			for _, r := range requests {
				if !strings.HasPrefix(r, "GET ") {
					t.Errorf("a write reached the printer without -allow-writes: %s (all: %q)", r, requests)
				}
			}
		}},
		{name: "quickstart", args: []string{"-printer", "line1", "-allow-writes"}, printer: true, want: []string{
			"uploaded image quickstart-logo", "selected the print job", "trigger 3:",
			"counters: 3 triggers, 1 bounces, 2 labels printed", "deselected every job on line1", "deleted the table", "done",
		}, check: func(t *testing.T, requests []string) {
			for _, w := range []string{"PUT /api/v3/images/quickstart-logo", "POST /api/v3/printers/line1/printJob",
				"POST /api/v3/printers/line1/trigger", "DELETE /api/v3/labels/quickstart-label"} {
				if !slices.Contains(requests, w) {
					t.Errorf("-allow-writes: %s never reached the printer (all: %q)", w, requests)
				}
			}
		}},
		{name: "print-from-table", args: []string{"-sku", "S12-500A"}, want: []string{"selected S12-500A", "printed labels: 1"}},
		{name: "upload-image", want: []string{"example-logo: READY, 120x40 px", "intent PERCEPTUAL"}},
		{name: "history", args: []string{"-resolution", "HOURS"}, want: []string{"    7 #######"}},
		{name: "outbox", want: []string{
			"enqueued 4 orders twice: 4 entries", "order-4711/1  unknown   attempts=3", "order-4711/2  sent      attempts=1",
			"order-4712/1  rejected  attempts=1", "order-4713/1  sent      attempts=1", "printJob requests: 6,", "done",
		}},
		{name: "watch-counters", args: []string{"-every", "200ms"}, interruptAt: 3, want: []string{"triggers=", "printed=", " (+1)", "stopped"}},
		{name: "print-and-confirm", args: []string{"-every", "20ms"}, want: []string{"printed 5/5", "all 5 labels printed", "trigger outcome: bounced (triggers 5 -> 6, bounces 0 -> 1, printed 5 -> 5)"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(append([]string{tc.name}, tc.args...), " "), func(t *testing.T) {
			t.Parallel()
			args := tc.args
			var rec *recorder
			if tc.printer {
				sim := printersim.New(printersim.WithPrinters("line1"), printersim.WithProcessingDelay(0))
				rec = &recorder{next: sim}
				srv := httptest.NewServer(rec)
				defer sim.Close()
				defer srv.Close()
				args = append([]string{"-url", srv.URL}, args...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, tc.name), args...)
			stdout := &lineWriter{atLines: tc.interruptAt, reached: make(chan struct{})}
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.interruptAt > 0 {
				go func() {
					select {
					case <-stdout.reached:
						_ = cmd.Process.Signal(os.Interrupt)
					case <-ctx.Done():
					}
				}()
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", tc.name, err, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("%s output lacks %q:\n%s", tc.name, w, stdout.String())
				}
			}
			if tc.check != nil {
				tc.check(t, rec.requests())
			}
		})
	}
}

// recorder passes requests to a simulator and remembers each one's method and path.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.URL.EscapedPath())
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// lineWriter collects a child's output and closes reached once it holds atLines lines (when
// atLines > 0).
type lineWriter struct {
	atLines int
	reached chan struct{}

	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.atLines > 0 && !w.closed && bytes.Count(w.buf.Bytes(), []byte("\n")) >= w.atLines {
		close(w.reached)
		w.closed = true
	}
	return n, err
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
