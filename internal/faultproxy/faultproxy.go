// Package faultproxy is a TCP proxy for tests whose link can be broken on command: a client
// reaches a server on loopback through it, and the test partitions, freezes, resets or slows
// that link while both ends keep running. It is how the tests give a live process the faults
// a plant's network gives it (a cable pulled, a switch that drops everything, a frozen VM's
// host, a slow radio link) instead of only killing the process.
//
//	p := faultproxy.Start(t, pgAddr) // listens on 127.0.0.1, closed when t ends
//	dsn := "postgres://...@" + p.Addr() + "/db"
//	p.Set(faultproxy.Blackhole)      // the partition begins
//	p.Set(faultproxy.Pass)           // and heals
//
// It is imported by tests and test programs only.
package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Mode is what the link does with the bytes and connections that reach it.
type Mode int

const (
	// Pass forwards everything, after the delay set with SetDelay.
	Pass Mode = iota
	// Blackhole is a partition that outlasts TCP's patience: nothing moves in either
	// direction, a new connection is accepted but never reaches the server, and when the link
	// heals every connection that was open during the partition is reset: what was written
	// into it is lost with it.
	Blackhole
	// Freeze is a pause that TCP rides out (a stopped host, a short outage): nothing moves,
	// nothing is lost, and when the link heals what was held flows on in order.
	Freeze
	// Reset resets (RST) every open connection and every new one while it lasts.
	Reset
)

// String names the mode as the tests log it.
func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Blackhole:
		return "blackhole"
	case Freeze:
		return "freeze"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Proxy forwards the connections made to Addr to its target, subject to its Mode.
type Proxy struct {
	target string
	ln     net.Listener

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change of mode, delay or links
	mode     Mode
	delay    time.Duration
	links    map[*link]struct{}
	accepted int
	closed   bool
	wg       sync.WaitGroup

	// trigger, when set, turns the link to triggerMode once a chunk from a client holding it
	// has been forwarded; it then clears itself.
	trigger     []byte
	triggerMode Mode
	triggered   chan struct{}
}

// link is one client connection and, once the link lets it through, its server connection.
type link struct {
	client net.Conn
	server net.Conn // nil until dialled
	dead   bool     // reset: the pumps stop
	holed  bool     // open during a Blackhole: reset when it heals
}

// New starts a proxy to target (host:port) on a free loopback port. Close stops it.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, changed: make(chan struct{}), links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Start is New for a test: it fails t when the proxy cannot listen, and closes it when t ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Addr is the address ("127.0.0.1:port") the client should connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Conns is the number of connections accepted so far.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Mode is the link's mode now.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Set changes the link's mode; it takes effect at once on every open connection.
func (p *Proxy) Set(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.mode == Blackhole && m != Blackhole {
		for l := range p.links {
			if l.holed {
				p.kill(l)
			}
		}
	}
	p.mode = m
	switch m {
	case Blackhole:
		for l := range p.links {
			l.holed = true
		}
	case Reset:
		for l := range p.links {
			p.kill(l)
		}
	}
	p.broadcast()
}

// SetAfter arms the link to turn to mode m as it forwards, from a client to the
// server, a chunk of bytes that holds match (within one read: a protocol message written at
// once, such as a statement's text). It fires once; the returned channel is closed when it
// has. A test uses it to cut a client off at one exact point of its conversation, such as
// inside a database transaction that holds locks.
func (p *Proxy) SetAfter(match []byte, m Mode) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger = append([]byte(nil), match...)
	p.triggerMode = m
	p.triggered = make(chan struct{})
	return p.triggered
}

// fire turns the link to the armed mode when chunk, forwarded from a client, holds the armed
// match.
func (p *Proxy) fire(chunk []byte) {
	p.mu.Lock()
	armed := p.trigger != nil && bytes.Contains(chunk, p.trigger)
	m, done := p.triggerMode, p.triggered
	if armed {
		p.trigger, p.triggered = nil, nil
	}
	p.mu.Unlock()
	if armed {
		p.Set(m)
		close(done)
	}
}

// SetDelay makes the link forward each chunk of bytes d after it was read (0: at once).
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
	p.broadcast()
}

// Close stops accepting, resets every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.ln.Close()
	for l := range p.links {
		p.kill(l)
	}
	p.broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// broadcast wakes every pump waiting for a change. p.mu is held.
func (p *Proxy) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// kill resets both of l's connections: SO_LINGER 0 makes Close send RST instead of FIN, as a
// peer that gave up on the connection would. p.mu is held.
func (p *Proxy) kill(l *link) {
	if l.dead {
		return
	}
	l.dead = true
	for _, c := range []net.Conn{l.client, l.server} {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		if c != nil {
			c.Close()
		}
	}
	delete(p.links, l)
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.accepted++
		l := &link{client: c, holed: p.mode == Blackhole}
		p.links[l] = struct{}{}
		if p.mode == Reset {
			p.kill(l)
			p.mu.Unlock()
			continue
		}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l)
	}
}

// flow waits until bytes may move on l, then returns the delay to apply; false: l is dead.
func (p *Proxy) flow(l *link) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if l.dead {
			return 0, false
		}
		if p.mode == Pass {
			return p.delay, true
		}
		ch := p.changed
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
}

// serve dials the target once the link lets the connection through, then pumps both ways.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	if _, ok := p.flow(l); !ok {
		return
	}
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	p.mu.Lock()
	if err != nil || l.dead {
		if s != nil {
			s.Close()
		}
		p.kill(l)
		p.mu.Unlock()
		return
	}
	l.server = s
	p.wg.Add(2)
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { defer p.wg.Done(); p.pump(l, l.client, s); done <- struct{}{} }()
	go func() { defer p.wg.Done(); p.pump(l, s, l.client); done <- struct{}{} }()
	<-done
	<-done
	p.mu.Lock()
	if !l.dead {
		l.dead = true
		l.client.Close()
		s.Close()
		delete(p.links, l)
	}
	p.mu.Unlock()
}

// pump copies src to dst chunk by chunk, each only when the link lets it through, and passes
// src's end on as a half close, or its reset as a reset of the whole link: a server whose
// client was reset (a process killed with unread bytes) must see its end, or its session and
// the locks it holds would outlive the client.
func (p *Proxy) pump(l *link, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			d, ok := p.flow(l)
			if !ok {
				return
			}
			if d > 0 && !p.sleep(l, d) {
				return
			}
			if src == l.client {
				// The mode changes before the chunk goes on, so that the server's answer to it
				// already meets the new mode.
				p.fire(buf[:n])
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.reset(l)
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// The reset waits for the link like the bytes before it.
				if _, ok := p.flow(l); ok {
					p.reset(l)
				}
				return
			}
			// The end of the stream is a byte too: it waits for the link like the others.
			if _, ok := p.flow(l); !ok {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// reset resets both of l's connections.
func (p *Proxy) reset(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kill(l)
}

// sleep waits d unless l dies first (or the proxy closes); false: l is dead.
func (p *Proxy) sleep(l *link, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		p.mu.Lock()
		dead, ch := l.dead, p.changed
		p.mu.Unlock()
		if dead {
			return false
		}
		select {
		case <-t.C:
			return true
		case <-ch:
		}
	}
}
