package fence

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// holdingPrinter answers every request 200, but only once release is closed; it counts the
// requests it read whole.
type holdingPrinter struct {
	ln       net.Listener
	arrived  chan struct{} // one per request read
	release  chan struct{}
	answer   func() // closes release, once
	requests atomic.Int64
	srv      *http.Server
}

func startHoldingPrinter(t *testing.T) *holdingPrinter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdingPrinter{ln: ln, arrived: make(chan struct{}, 16), release: make(chan struct{})}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		p.requests.Add(1)
		p.arrived <- struct{}{}
		select {
		case <-p.release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	})}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = p.srv.Serve(ln)
	}()
	p.answer = sync.OnceFunc(func() { close(p.release) })
	t.Cleanup(func() {
		p.answer()
		_ = p.srv.Close()
		wg.Wait()
	})
	return p
}

// TestBoundToWriteLeavesWrittenRequest: when the lease ends, expired or lost, a request that
// was written under it is left to bring its answer, while a call with nothing written is cut
// off at once and a later attempt of the written call never leaves.
func TestBoundToWriteLeavesWrittenRequest(t *testing.T) {
	for _, end := range []string{"expired", "lost"} {
		t.Run(end, func(t *testing.T) {
			p := startHoldingPrinter(t)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			url := "http://" + p.ln.Addr().String() + "/api/v3/printers/p1/printJob"
			ttl := time.Hour
			if end == "expired" {
				ttl = 500 * time.Millisecond
			}
			l := Start(ttl, time.Now())
			defer l.Lose(errors.New("end of test"))

			wctx, written := l.BoundToWrite(context.Background())
			defer written.End()
			errc := make(chan error, 1)
			go func() { errc <- post(t, wctx, cl, url) }()
			select {
			case <-p.arrived:
			case <-time.After(limit):
				t.Fatal("the request did not arrive")
			}
			idle, idleCall := l.BoundToWrite(context.Background())
			defer idleCall.End()

			lost := errors.New("another holder has it")
			if end == "lost" {
				l.Lose(lost)
			}
			select {
			case <-idle.Done():
			case <-time.After(limit):
				t.Fatal("a call with nothing written went on after the lease ended")
			}
			if wctx.Err() != nil {
				t.Fatalf("the written request was cancelled when the lease ended: %v", context.Cause(wctx))
			}
			p.answer()
			select {
			case err := <-errc:
				if err != nil {
					t.Fatalf("the written request's answer: %v, want 200", err)
				}
			case <-time.After(limit):
				t.Fatal("the written request's answer did not come")
			}
			if _, n, last := written.Attempts(); n != 1 || last != WasWritten {
				t.Errorf("written %d, last %v; want 1, written", n, last)
			}
			// The same call again (a retry of the SDK's): it never leaves.
			if err := post(t, wctx, cl, url); err == nil {
				t.Fatal("a new attempt after the lease ended succeeded")
			}
			if _, n, last := written.Attempts(); n != 1 || last != NotWritten {
				t.Errorf("after a new attempt: written %d, last %v; want 1, not written", n, last)
			}
			time.Sleep(50 * time.Millisecond) // anything written would have arrived
			if n := p.requests.Load(); n != 1 {
				t.Errorf("the printer read %d requests, want 1", n)
			}
		})
	}
}
