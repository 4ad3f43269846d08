package printersim

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Reset says when an injected fault drops the connection with a TCP reset.
type Reset int

const (
	// NoReset answers normally.
	NoReset Reset = iota
	// ResetBeforeRead drops the connection before reading the request body: the request never
	// takes effect.
	ResetBeforeRead
	// ResetAfterRead reads the whole request and lets it take effect, then drops the
	// connection: the printer acted, but its answer is lost.
	ResetAfterRead
)

// Fault makes the next matching requests fail. Method and Route select them, Route being the
// contract's path pattern ("/api/v3/printers/{name}/printJob"); Times is how many requests it
// applies to (0 means every one until ClearFaults). Delay comes first; then a reset, a status,
// or a truncated answer.
type Fault struct {
	// Method is the HTTP method of the requests to fail.
	Method string
	// Route is the contract's path pattern of the requests to fail.
	Route string
	// Times is how many requests the fault applies to; 0 means all until ClearFaults.
	Times int
	// Status answers this status with a JSON error instead of serving the request.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header with Status.
	RetryAfter string
	// Delay holds the answer back for this long (or until the client goes away).
	Delay time.Duration
	// Reset drops the connection, before or after the request took effect.
	Reset Reset
	// Truncate serves the request but cuts its answer in half while declaring its full length.
	Truncate bool
}

type faultRule struct {
	key  string
	left int // < 0: unlimited
	f    Fault
}

// InjectFault adds a fault; faults apply in the order they were added.
func (s *Simulator) InjectFault(f Fault) {
	left := f.Times
	if left <= 0 {
		left = -1
	}
	s.mu.Lock()
	s.faults = append(s.faults, &faultRule{key: f.Method + " " + f.Route, left: left, f: f})
	s.mu.Unlock()
}

// ClearFaults removes every injected fault.
func (s *Simulator) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// takeFault returns the first fault for key and uses it up once; s.mu is held.
func (s *Simulator) takeFault(key string) *Fault {
	for i, rule := range s.faults {
		if rule.key != key {
			continue
		}
		f := rule.f
		if rule.left > 0 {
			rule.left--
			if rule.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &f
	}
	return nil
}

// applyFault carries out f and reports whether the request has been answered.
func (s *Simulator) applyFault(w http.ResponseWriter, r *http.Request, pattern string, f *Fault) bool {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return true
		case <-t.C:
		}
	}
	switch {
	case f.Reset == ResetBeforeRead:
		reset(w)
		return true
	case f.Reset == ResetAfterRead:
		s.serve(discardWriter{header: http.Header{}}, r, pattern)
		_, _ = io.Copy(io.Discard, r.Body)
		reset(w)
		return true
	case f.Status != 0:
		_, _ = io.Copy(io.Discard, r.Body)
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, f.Status, "injected fault: "+strconv.Itoa(f.Status))
		return true
	case f.Truncate:
		rec := &bufferWriter{header: http.Header{}}
		s.serve(rec, r, pattern)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(rec.body)))
		w.WriteHeader(rec.code())
		_, _ = w.Write(rec.body[:len(rec.body)/2])
		// net/http closes a connection whose handler wrote less than it declared.
		return true
	}
	return false
}

// reset drops the client's connection with a TCP RST.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) WriteHeader(int)             {}
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// bufferWriter records a handler's answer: for truncated replies and for the mux's own
// answers to unmatched requests.
type bufferWriter struct {
	header http.Header
	status int
	body   []byte
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	b.body = append(b.body, p...)
	return len(p), nil
}
func (b *bufferWriter) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}
