package fence

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// limit bounds every wait for an event that must come; it is never measured.
const limit = 10 * time.Second

func TestUntil(t *testing.T) {
	sent := time.Now()
	if got, want := Until(sent, 10*time.Second), sent.Add(8*time.Second); !got.Equal(want) {
		t.Errorf("Until(sent, 10s) = sent+%v, want sent+8s", got.Sub(sent))
	}
}

// TestStartLate: an acquire that came back after 4/5 of the TTL from when it was sent gives
// no lease to act under.
func TestStartLate(t *testing.T) {
	if l := Start(time.Second, time.Now().Add(-801*time.Millisecond)); l != nil {
		l.Lose(errors.New("test"))
		t.Fatal("Start gave a lease for an acquire sent 801 ms ago with a 1 s TTL")
	}
	l := Start(time.Second, time.Now())
	if l == nil || !l.Held() {
		t.Fatal("Start gave no held lease for an acquire sent just now")
	}
	l.Lose(errors.New("test"))
}

// TestExpires: without renewals the lease ends at its deadline, cancelling its calls with
// ErrExpired, and a late renewal does not revive it.
func TestExpires(t *testing.T) {
	sent := time.Now()
	l := Start(100*time.Millisecond, sent)
	ctx, call := l.Bound(context.Background())
	defer call.End()
	select {
	case <-ctx.Done():
	case <-time.After(limit):
		t.Fatal("the call's context did not end at the lease's deadline")
	}
	if now := time.Now(); now.Before(Until(sent, 100*time.Millisecond)) {
		t.Errorf("ended %v before the deadline", Until(sent, 100*time.Millisecond).Sub(now))
	}
	if !errors.Is(context.Cause(ctx), ErrExpired) || !errors.Is(l.Err(), ErrExpired) {
		t.Errorf("cause %v, lease error %v, want ErrExpired", context.Cause(ctx), l.Err())
	}
	if l.Renewed(time.Now()) || l.Held() {
		t.Error("a renewal after the deadline revived the lease")
	}
}

// TestRenewals: renewals move the deadline forward, never back, and keep the calls going.
func TestRenewals(t *testing.T) {
	const ttl = 200 * time.Millisecond
	l := Start(ttl, time.Now())
	defer l.Lose(errors.New("end of test"))
	ctx, call := l.Bound(context.Background())
	defer call.End()
	for range 15 {
		time.Sleep(ttl / 10)
		if !l.Renewed(time.Now()) {
			t.Fatal("a renewal in time was refused")
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the call ended while the lease was renewed: %v", context.Cause(ctx))
	}
	d := l.Deadline()
	l.Renewed(time.Now().Add(-ttl / 2))
	if !l.Deadline().Equal(d) {
		t.Error("an older renewal moved the deadline back")
	}
}

// TestLoseCancelsAtOnce: a lost lease ends every call under it with the cause given.
func TestLoseCancelsAtOnce(t *testing.T) {
	l := Start(time.Hour, time.Now())
	lost := errors.New("another holder has it")
	var ctxs []context.Context
	for range 3 {
		ctx, call := l.Bound(context.Background())
		defer call.End()
		ctxs = append(ctxs, ctx)
	}
	l.Lose(lost)
	for _, ctx := range ctxs {
		select {
		case <-ctx.Done():
		case <-time.After(limit):
			t.Fatal("a call went on after the lease was lost")
		}
		if !errors.Is(context.Cause(ctx), lost) {
			t.Errorf("cause %v, want %v", context.Cause(ctx), lost)
		}
	}
	if !errors.Is(l.Err(), lost) {
		t.Errorf("Err %v, want %v", l.Err(), lost)
	}
}

// printer is a TCP server that counts the bytes it receives and answers each request 200.
type printer struct {
	ln    net.Listener
	bytes atomic.Int64
	wg    sync.WaitGroup
}

func startPrinter(t *testing.T) *printer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &printer{ln: ln}
	var mu sync.Mutex
	var conns []net.Conn
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					p.bytes.Add(int64(n))
					if n > 0 {
						_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// clock is a lease's clock that a test moves past the deadline at a moment of its choosing,
// before the lease's timer (on the real clock) fires.
type clock struct{ skip atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.skip.Load())) }

// post sends one POST under ctx and returns its error.
func post(t *testing.T, ctx context.Context, cl *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	return err
}

// TestNothingWrittenAfterDeadline: a request whose connection is got, or whose headers are
// complete, after the lease's deadline (the lease's timer not having fired yet, as on a busy
// host) never reaches the printer: not a byte of it, on a new connection or a kept one.
func TestNothingWrittenAfterDeadline(t *testing.T) {
	for _, at := range []string{"GetConn", "GotConn", "WroteHeaders"} {
		t.Run(at, func(t *testing.T) {
			p := startPrinter(t)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			url := "http://" + p.ln.Addr().String() + "/api/v3/printers/p1/abortPrint"
			for _, kept := range []bool{false, true} {
				c := &clock{}
				l := start(time.Hour, time.Now(), c.now)
				if kept {
					// A first request under another lease leaves a connection to reuse.
					if err := post(t, context.Background(), cl, url); err != nil {
						t.Fatal(err)
					}
				}
				before := p.bytes.Load()
				// The test's hook runs after the fence's own for the same event: the deadline
				// passes just after the fence looked.
				skip := func() { c.skip.Store(int64(2 * time.Hour)) }
				trace := &httptrace.ClientTrace{}
				switch at {
				case "GetConn":
					skip() // before the request begins
				case "GotConn":
					trace.GetConn = func(string) { skip() }
				case "WroteHeaders":
					trace.GotConn = func(httptrace.GotConnInfo) { skip() }
				}
				ctx, call := l.Bound(httptrace.WithClientTrace(context.Background(), trace))
				err := post(t, ctx, cl, url)
				call.End()
				if err == nil {
					t.Fatalf("kept connection %v: a request past the deadline at %s succeeded", kept, at)
				}
				if !errors.Is(context.Cause(ctx), ErrExpired) {
					t.Errorf("kept connection %v: cause %v, want ErrExpired", kept, context.Cause(ctx))
				}
				if _, written, last := call.Attempts(); written != 0 || last != NotWritten {
					t.Errorf("kept connection %v: %d written, last %v; want none written", kept, written, last)
				}
				time.Sleep(50 * time.Millisecond) // anything written would have arrived
				if n := p.bytes.Load() - before; n != 0 {
					t.Errorf("kept connection %v: the printer received %d bytes of a request sent past the deadline at %s", kept, n, at)
				}
			}
		})
	}
}

// TestWrittenInTime: a request under a held lease goes out, and the call says so.
func TestWrittenInTime(t *testing.T) {
	p := startPrinter(t)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	l := Start(time.Hour, time.Now())
	defer l.Lose(errors.New("end of test"))
	ctx, call := l.Bound(context.Background())
	defer call.End()
	if err := post(t, ctx, &http.Client{Transport: tr}, "http://"+p.ln.Addr().String()+"/x"); err != nil {
		t.Fatal(err)
	}
	if begun, written, last := call.Attempts(); begun != 1 || written != 1 || last != WasWritten {
		t.Errorf("begun %d, written %d, last %v; want 1, 1, written", begun, written, last)
	}
}
