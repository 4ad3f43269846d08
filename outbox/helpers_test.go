package outbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/printersim"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The crash and lock tests re-run this binary as a child process that does one job.
	if code, ok := childMain(); ok {
		os.Exit(code)
	}
	code := m.Run()
	// The PostgreSQL the tests started, if any, stops once they are done, before goroutines
	// are counted, as goleak.VerifyTestMain counts them.
	pgtest.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// recorder sits in front of the simulator: it records the Description of every printJob that
// reaches it with the status the printer answered, in arrival order, and answers 503 for
// printers marked down.
type recorder struct {
	mu    sync.Mutex
	jobs  []seenJob
	posts []string // every POST that reached the simulator: "printers/line1/trigger", "printJob <desc>"
	down  map[string]bool
	// ready, when set, holds back every printJob until it is closed: the test's label is stored.
	ready chan struct{}
	// onJob, when set, is called for every printJob instead of serving it; it may call serve,
	// and returning false hangs up without an answer (whatever serve wrote is not sent).
	onJob func(desc string, serve func()) bool
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !strings.HasSuffix(r.URL.Path, "/printJob") {
			rec.mu.Lock()
			rec.posts = append(rec.posts, strings.TrimPrefix(r.URL.Path, "/api/v3/"))
			rec.mu.Unlock()
		}
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/printJob") {
			next.ServeHTTP(w, r)
			return
		}
		if rec.ready != nil {
			select {
			case <-rec.ready:
			case <-r.Context().Done():
				return
			}
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var j struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(body, &j)
		rec.mu.Lock()
		rec.posts = append(rec.posts, strings.TrimPrefix(r.URL.Path, "/api/v3/")+" "+j.Description)
		rec.mu.Unlock()
		printer := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v3/printers/"), "/printJob")
		rec.mu.Lock()
		down := rec.down[printer]
		onJob := rec.onJob
		rec.mu.Unlock()
		if down {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"message":"printer offline"}`)
			return
		}
		serve := func() {
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			rec.mu.Lock()
			rec.jobs = append(rec.jobs, seenJob{desc: j.Description, status: sw.status})
			rec.mu.Unlock()
		}
		if onJob != nil && !onJob(j.Description, serve) {
			panic(http.ErrAbortHandler) // hang up without an answer
		}
		if onJob != nil {
			return
		}
		serve()
	})
}

func (rec *recorder) setDown(printer string, down bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.down == nil {
		rec.down = map[string]bool{}
	}
	rec.down[printer] = down
}

// seenJob is a print job that reached the simulator: its Description and the status it was
// answered with (0 when the connection was reset instead).
type seenJob struct {
	desc   string
	status int
}

// statusWriter keeps the status a handler answers with; it stays 0 when the handler hijacks
// the connection to reset it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hijack lets the simulator's reset faults reach the connection.
func (s *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(s.ResponseWriter).Hijack()
}

func (rec *recorder) setOnJob(f func(desc string, serve func()) bool) {
	rec.mu.Lock()
	rec.onJob = f
	rec.mu.Unlock()
}

// received returns the descriptions of the print jobs the printer acted on, in order: every
// one that reached it except those it answered 408, 429 or 503 ("not now", before looking at
// the job).
func (rec *recorder) received() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []string
	for _, j := range rec.jobs {
		if j.status != http.StatusServiceUnavailable && j.status != http.StatusTooManyRequests && j.status != http.StatusRequestTimeout {
			out = append(out, j.desc)
		}
	}
	return out
}

// sentPosts returns the POSTs that reached the simulator, in order.
func (rec *recorder) sentPosts() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.posts)
}

// counts returns how many print jobs with each description reached the simulator.
func (rec *recorder) counts() map[string]int {
	m := map[string]int{}
	for _, d := range rec.received() {
		m[d]++
	}
	return m
}

// startSim serves a simulator with printers line1 and line2 and a label "L" behind a recorder.
func startSim(t testing.TB, ln net.Listener) (*printersim.Server, *recorder) {
	t.Helper()
	return startSimWith(t, ln, "line1", "line2")
}

// startSimWith serves a simulator with the printers named and a label "L" behind a recorder.
func startSimWith(t testing.TB, ln net.Listener, printers ...string) (*printersim.Server, *recorder) {
	t.Helper()
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
	}
	// A client may be waiting for this address already: its print jobs wait for the label.
	rec := &recorder{ready: make(chan struct{})}
	srv := printersim.Serve(ln, printersim.New(printersim.WithPrinters(printers...)), rec.wrap)
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	if err := c.Labels.Put(context.Background(), "L", json.RawMessage(`{"format":3}`)); err != nil {
		t.Fatal(err)
	}
	close(rec.ready)
	return srv, rec
}

// newClient returns a Client whose print jobs are tried once even on a refused connection, so
// a test's Pending comes from the outbox's own retry and not the SDK's.
func newClient(t testing.TB, url string) *labelprinter.Client {
	t.Helper()
	c, err := labelprinter.NewClient(url, labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func openOutbox(t testing.TB, c *labelprinter.Client, opts ...Option) (*Outbox, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.outbox")
	ob, err := Open(path, c, append([]Option{WithRetryInterval(10 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ob.Close() })
	return ob, path
}

// running starts Run and stops it at cleanup, failing the test if it returned an error.
func running(t testing.TB, ob *Outbox) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- ob.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func job(desc string) labelprinter.PrintJob {
	return labelprinter.PrintJob{LabelName: "L", Queue: labelprinter.Ptr(true), Description: desc}
}

func enqueue(t testing.TB, ob *Outbox, in Intent) Entry {
	t.Helper()
	e, err := ob.Enqueue(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// waitState polls until entry id is in state want, and fails after 10 s.
func waitState(t testing.TB, ob *Outbox, id string, want State) Entry {
	t.Helper()
	return waitStateWithin(t, ob, id, want, 10*time.Second)
}

// waitStateWithin is waitState with a limit of its own.
func waitStateWithin(t testing.TB, ob *Outbox, id string, want State, limit time.Duration) Entry {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		e, err := ob.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if e.State == want {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: state %s (attempts %d, error %q), want %s", id, e.State, e.Attempts, e.Error, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, and fails after 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func isInvalid(err error) bool { return errors.Is(err, labelprinter.ErrInvalidArgument) }
