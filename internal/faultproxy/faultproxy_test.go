package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer answers every line with the same line, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	conns := make(chan net.Conn, 64)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatalf("write %q: %v", line, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := r.ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("echo of %q: got %q, %v", line, got, err)
	}
}

// silent reports that nothing arrives on c within d.
func silent(t *testing.T, c net.Conn, r *bufio.Reader, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	if got, err := r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the link let %q through (err %v)", got, err)
	}
}

func TestPassForwardsBothWays(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	for _, s := range []string{"one", "two", "three"} {
		roundTrip(t, c, r, s)
	}
	if p.Conns() != 1 {
		t.Fatalf("Conns = %d, want 1", p.Conns())
	}
}

func TestFreezeHoldsAndThenDeliversInOrder(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	p.Set(Freeze)
	if _, err := io.WriteString(c, "a\nb\n"); err != nil {
		t.Fatal(err)
	}
	silent(t, c, r, 300*time.Millisecond)
	// A connection made during the freeze hangs too, and lives on after it.
	c2, r2 := dial(t, p)
	if _, err := io.WriteString(c2, "new\n"); err != nil {
		t.Fatal(err)
	}
	silent(t, c2, r2, 100*time.Millisecond)
	p.Set(Pass)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for _, want := range []string{"a\n", "b\n"} {
		if got, err := r.ReadString('\n'); err != nil || got != want {
			t.Fatalf("after the freeze: got %q, %v; want %q", got, err, want)
		}
	}
	_ = c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r2.ReadString('\n'); err != nil || got != "new\n" {
		t.Fatalf("the connection made during the freeze: got %q, %v", got, err)
	}
	roundTrip(t, c, r, "after")
}

func TestBlackholeDropsAndResetsOnHeal(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	p.Set(Blackhole)
	if _, err := io.WriteString(c, "lost\n"); err != nil {
		t.Fatal(err)
	}
	silent(t, c, r, 300*time.Millisecond)
	c2, r2 := dial(t, p) // made during the partition: it never reaches the server
	_, _ = io.WriteString(c2, "lost too\n")
	silent(t, c2, r2, 100*time.Millisecond)
	p.Set(Pass)
	for _, cr := range []struct {
		c net.Conn
		r *bufio.Reader
	}{{c, r}, {c2, r2}} {
		_ = cr.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := cr.r.ReadString('\n')
		if got != "" || !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("a connection open during the partition: got %q, %v; want a reset and nothing", got, err)
		}
	}
	c3, r3 := dial(t, p)
	roundTrip(t, c3, r3, "healed")
}

func TestResetResetsOpenAndNewConnections(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	p.Set(Reset)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadString('\n'); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("open connection: %v, want a reset", err)
	}
	// A new connection is reset as soon as it is accepted: the dial itself may see the reset.
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		defer c2.Close()
		_ = c2.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := bufio.NewReader(c2).ReadString('\n'); !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
			t.Fatalf("new connection: %v, want a reset", err)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("new connection: %v, want a reset", err)
	}
	p.Set(Pass)
	c3, r3 := dial(t, p)
	roundTrip(t, c3, r3, "healed")
}

func TestDelayIsLatency(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "warm")
	const d = 100 * time.Millisecond
	p.SetDelay(d)
	start := time.Now()
	roundTrip(t, c, r, "slow")
	// Each direction adds d: the round trip takes at least 2d (no upper bound: a loaded
	// machine may take longer).
	if took := time.Since(start); took < 2*d {
		t.Fatalf("round trip with %v each way took %v", d, took)
	}
	p.SetDelay(0)
	roundTrip(t, c, r, "fast")
}

func TestClientEndIsPassedOnAfterTheFreeze(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	roundTrip(t, c, r, "before")
	p.Set(Freeze)
	_, _ = io.WriteString(c, "last\n")
	_ = c.(*net.TCPConn).CloseWrite()
	silent(t, c, r, 200*time.Millisecond)
	p.Set(Pass)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "last\n" {
		t.Fatalf("after the freeze: %q, %v; want the last line and the server's end", rest, err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c, r := dial(t, p)
	roundTrip(t, c, r, "x")
	p.Set(Freeze)
	_, _ = io.WriteString(c, "held\n")
	p.Close()
	p.Close() // twice is fine
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("a connection outlived Close")
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("the proxy still accepts after Close")
	}
}

func TestClientResetReachesTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ended := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ended <- err
			return
		}
		defer c.Close()
		_, _ = io.WriteString(c, "hello\n") // left unread: the client's close is a reset
		_, err = io.Copy(io.Discard, c)
		ended <- err
	}()
	p := Start(t, ln.Addr().String())
	c, r := dial(t, p)
	if _, err := io.WriteString(c, "x"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.Peek(1); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).SetLinger(0)
	c.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's connection outlived its client's reset")
	}
}

func TestSetAfterCutsRightAfterTheMatch(t *testing.T) {
	p := Start(t, echoServer(t))
	c, r := dial(t, p)
	fired := p.SetAfter([]byte("LOCK"), Blackhole)
	roundTrip(t, c, r, "before")
	select {
	case <-fired:
		t.Fatal("fired before its match")
	default:
	}
	// The chunk holding the match reaches the server; its answer and all after it do not.
	if _, err := io.WriteString(c, "LOCK\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the match did not fire")
	}
	if p.Mode() != Blackhole {
		t.Fatalf("mode %v after the match, want blackhole", p.Mode())
	}
	silent(t, c, r, 200*time.Millisecond)
	p.Set(Pass)
	c2, r2 := dial(t, p)
	roundTrip(t, c2, r2, "LOCK") // fired once: the match passes now
	if p.Mode() != Pass {
		t.Fatalf("mode %v: the trigger fired twice", p.Mode())
	}
}
