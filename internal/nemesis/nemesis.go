// Package nemesis holds what the module's nemesis tests share: the printers' journal, which
// is their ground truth (every print job a printer acted on, in the order it acted), the
// checker of at most once and order over it, the IDs the tests print, and the choice of seeds
// (a fixed list, NEMESIS_SEED=n, or NEMESIS_TIME=d of random seeds). The outbox's nemesis
// breaks runner processes on PostgreSQL, the bridge's breaks MQTT bridges; both read the same
// journal with the same rules.
//
// It is imported by tests only.
package nemesis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/faultproxy"
)

// Print is one print job a printer acted on: the printer's name on its controller and the
// job's description, which the tests set to its ID.
type Print struct {
	Printer, ID string
}

// Journal records every print job the printers behind Wrap acted on (answered 2xx), in the
// order they acted, and every abortPrint they acted on.
type Journal struct {
	// Delay, when set, is a print's own time, spent before the printer acts.
	Delay func() time.Duration
	// LoseAnswer, when set, is asked about each print once the printer acted on it; when it
	// says so, the answer is lost on its way back (the connection is closed without it), and
	// the sender cannot tell whether it printed.
	LoseAnswer func(Print) bool

	mu     sync.Mutex
	prints []Print
	count  map[string]int
	aborts []Abort
}

// Abort is one abortPrint a printer acted on: its printer, when it acted, and how many print
// jobs that printer had acted on before.
type Abort struct {
	Printer string
	At      time.Time
	After   int
}

// Wrap puts the journal in front of a simulator's handler.
func (j *Journal) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		printer, op, ok := printerOp(r)
		if !ok || (op != "printJob" && op != "abortPrint") {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the request never arrived whole: nothing acted on
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var jb struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(body, &jb)
		if op == "printJob" && j.Delay != nil {
			time.Sleep(j.Delay())
		}
		if op == "printJob" && j.LoseAnswer != nil {
			rec := httptest.NewRecorder()
			p, acted := j.act(next, rec, r, printer, op, jb.Description)
			if acted && j.LoseAnswer(p) {
				panic(http.ErrAbortHandler) // the connection closes; the answer never leaves
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		j.act(next, w, r, printer, op, jb.Description)
	})
}

// act has the printer act on r and records it if it answered 2xx. The printer acts and the
// journal records it under one lock: the journal's order is the order the printers acted in.
func (j *Journal) act(next http.Handler, w http.ResponseWriter, r *http.Request, printer, op, desc string) (Print, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r)
	if sw.status < 200 || sw.status > 299 {
		return Print{}, false
	}
	if op == "abortPrint" {
		n := 0
		for _, p := range j.prints {
			if p.Printer == printer {
				n++
			}
		}
		j.aborts = append(j.aborts, Abort{Printer: printer, At: time.Now(), After: n})
		return Print{}, false
	}
	if j.count == nil {
		j.count = map[string]int{}
	}
	p := Print{Printer: printer, ID: desc}
	j.prints = append(j.prints, p)
	j.count[desc]++
	return p, true
}

// printerOp splits a request to /api/v3/printers/NAME/OP; a request sent through an HTTP
// proxy names the whole URL, whose path is the same.
func printerOp(r *http.Request) (printer, op string, ok bool) {
	if r.Method != http.MethodPost {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v3/printers/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, "/")
	if i < 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// Printed is how many times id was printed.
func (j *Journal) Printed(id string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.count[id]
}

// Snapshot returns the prints so far, in the order the printers acted.
func (j *Journal) Snapshot() []Print {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.prints)
}

// Aborts returns the abortPrints the printers acted on so far, in order.
func (j *Journal) Aborts() []Abort {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.aborts)
}

// statusWriter keeps the status a handler answers with.
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

// ID is the n-th ID a nemesis prints on printer.
func ID(printer string, n int) string { return fmt.Sprintf("%s-%05d", printer, n) }

// ParseID splits an ID made by ID.
func ParseID(id string) (printer string, n int, ok bool) {
	i := strings.LastIndex(id, "-")
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	return id[:i], n, err == nil
}

// Check returns what breaks at most once and order in the journal's prints: an ID printed
// twice, on another printer than its own, or before an ID given earlier to its printer. IDs
// for which outOfOrder is true (resent by an operator: they go to the head of their lane
// again) are left out of the order.
func Check(prints []Print, outOfOrder func(id string) bool) []string {
	var out []string
	seen := map[string]int{}
	last := map[string]int{}
	lastID := map[string]string{}
	for i, p := range prints {
		seen[p.ID]++
		if seen[p.ID] == 2 {
			out = append(out, fmt.Sprintf("%s printed twice (print %d of the journal)", p.ID, i+1))
		}
		printer, n, ok := ParseID(p.ID)
		if !ok || printer != p.Printer {
			out = append(out, fmt.Sprintf("printer %s printed %q, not one of its IDs", p.Printer, p.ID))
			continue
		}
		if outOfOrder(p.ID) {
			continue
		}
		if n < last[printer] {
			out = append(out, fmt.Sprintf("%s printed after %s (print %d of the journal)", p.ID, lastID[printer], i+1))
			continue
		}
		last[printer], lastID[printer] = n, p.ID
	}
	return out
}

// Seeds runs round on the fixed seeds, or on the seed NEMESIS_SEED names, or, with
// NEMESIS_TIME=d, on random seeds back to back for d, stopping at the first that fails (round
// returns false).
func Seeds(t *testing.T, fixed []uint64, round func(seed uint64) bool) {
	t.Helper()
	seeds := fixed
	if s := os.Getenv("NEMESIS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("NEMESIS_SEED=%q: not a seed", s)
		}
		seeds = []uint64{n}
	}
	var until time.Time
	if s := os.Getenv("NEMESIS_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("NEMESIS_TIME=%q: %v", s, err)
		}
		until = time.Now().Add(d)
		seeds = nil
	}
	for _, seed := range seeds {
		round(seed)
	}
	if !until.IsZero() {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
		for time.Now().Before(until) {
			if !round(rng.Uint64() % 1_000_000_000) {
				return
			}
		}
	}
}

// LogDir returns the directory a round of seed keeps its logs in, under NEMESIS_LOGDIR
// (made if missing), or "" when NEMESIS_LOGDIR is not set.
func LogDir(t testing.TB, seed uint64) string {
	t.Helper()
	dir := os.Getenv("NEMESIS_LOGDIR")
	if dir == "" {
		return ""
	}
	dir = filepath.Join(dir, fmt.Sprintf("seed-%d", seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Between returns a duration drawn from rng between lo and hi, both included.
func Between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// LinkFault draws the fault of one link of a process that holds a lease of ttl: a mode held
// for d (blackhole or freeze for 0.2 s to 2.5 TTLs, reset for 50 ms to 1 TTL), or Pass with
// each chunk delay late for d (slow: 0.5 to 3 TTLs, up to a quarter of a TTL a chunk).
//
// A request written into a frozen or slow link reaches the printer when the link lets it
// through, and no fence can call it back: that is the window the lease leaves open, a request
// written before the holder's deadline that arrives after the takeover. So a link to the
// printers (printer true) freezes for less than a tenth of the TTL and slows by less than a
// twenty-fifth of it, inside the fifth of the TTL between the deadline and the earliest
// takeover.
func LinkFault(rng *rand.Rand, ttl time.Duration, printer bool) (mode faultproxy.Mode, d, delay time.Duration) {
	switch rng.IntN(4) {
	case 0:
		mode, d = faultproxy.Blackhole, Between(rng, 200*time.Millisecond, 5*ttl/2)
	case 1:
		mode, d = faultproxy.Freeze, Between(rng, 200*time.Millisecond, 5*ttl/2)
		if printer {
			d = Between(rng, 10*time.Millisecond, ttl/10)
		}
	case 2:
		mode, d = faultproxy.Reset, Between(rng, 50*time.Millisecond, ttl)
	default:
		mode, d = faultproxy.Pass, Between(rng, 500*time.Millisecond, 3*ttl)
		delay = Between(rng, time.Millisecond, ttl/4)
		if printer {
			delay = Between(rng, time.Millisecond, ttl/25)
		}
	}
	return mode, d, delay
}
