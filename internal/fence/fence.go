// Package fence keeps what a lease holder sends to a printer inside its lease, by the holder's
// own monotonic clock.
//
// A lease kept in a database runs out by the database's clock; the holder knows only when it
// sent the request that acquired or renewed it, and counts from then. The lease is certain
// until that send time plus 4/5 of its TTL (Until): the last fifth is the margin for a request
// to leave this host and for clocks that run at different rates. A holder whose acquire came
// back after that does not hold it for certain: it renews at once, and acts only after a
// renewal that came back in time (Start returns nil until then).
//
// A Lease follows that deadline from its successful renewals. Requests made on its behalf take
// a context from Bound: it is cancelled the moment the lease is lost (Lose) or the deadline
// passes without a renewal (ErrExpired), which stops the SDK's retries with it, and its HTTP
// requests are checked where they leave (net/http/httptrace): an attempt that begins after the
// deadline is cancelled before it dials, and one whose request would be written after the
// deadline has its connection closed before a byte of the request leaves (on HTTP/1.1, with
// headers of up to 4 KiB, which the transport buffers until they are complete). On HTTP/2 the
// connection carries other calls' requests and is never closed: a request is stopped by its
// context, which the transport checks before it writes the headers, so one whose lease ended
// by the time it got its connection is not written; a deadline that passes while its headers
// are encoded cannot stop them, and Call.Attempts says it may be written. Call.Attempts
// says whether a cancelled request had been written: not before a connection was got for it,
// written once the transport reported it, and maybe in between.
// A request stopped before it had a connection ends with a cause the SDK reads as a failed
// dial, so its TransportError says it was not sent (MaybeSent false); errors.Is still finds
// the lease's cause in it.
//
// BoundToWrite is Bound for a call whose answer is still wanted after the lease ends (an
// outbox records it, or logs it for the person deciding about the entry): a request written
// in time is left to finish; only what was not written is cut off.
//
// A Lease ends once: after the deadline has passed or Lose, no renewal revives it, and the
// holder starts again from an acquire.
package fence

import (
	"context"
	"errors"
	"net"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"
)

// ErrExpired is the cause of a Bound context's end when the lease was not renewed before its
// deadline: the lease may still be held by the database's clock, but is no longer certain.
var ErrExpired = errors.New("fence: the lease was not renewed in time; nothing more is sent under it")

// Until is the one rule of this package: a lease whose acquire or renewal was sent at sent and
// succeeded is certainly held before the time it returns, sent plus Span(ttl).
func Until(sent time.Time, ttl time.Duration) time.Time { return sent.Add(Span(ttl)) }

// Span is how long after its request was sent an acquire or renewal keeps a lease of ttl
// certain: 4/5 of ttl. An answer that takes longer is of no use.
func Span(ttl time.Duration) time.Duration { return ttl - ttl/5 }

// Lease is a holder's view of one lease, from the first acquire or renewal that came back in
// time until it expires or is lost. Its methods are safe for concurrent use.
type Lease struct {
	ttl    time.Duration
	now    func() time.Time
	ctx    context.Context // ends with the lease
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
}

// Start returns the Lease of a holder whose acquire or renewal sent at sent succeeded, or nil
// when Until(sent, ttl) has already passed: the answer came too late to be sure of anything,
// and the holder must renew (and Start from that renewal) before it acts.
func Start(ttl time.Duration, sent time.Time) *Lease {
	return start(ttl, sent, time.Now)
}

func start(ttl time.Duration, sent time.Time, now func() time.Time) *Lease {
	deadline := Until(sent, ttl)
	if !now().Before(deadline) {
		return nil
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &Lease{ttl: ttl, now: now, ctx: ctx, cancel: cancel, deadline: deadline}
	l.mu.Lock()
	l.timer = time.AfterFunc(deadline.Sub(now()), l.check)
	l.mu.Unlock()
	return l
}

// check runs at the deadline: the lease expires unless a renewal moved the deadline since.
func (l *Lease) check() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return
	}
	if left := l.deadline.Sub(l.now()); left > 0 {
		l.timer.Reset(left)
		return
	}
	l.cancel(ErrExpired)
}

// Renewed records a renewal that succeeded and whose request was sent at sent; the deadline
// moves to Until(sent, ttl) when that is later. It returns whether the lease is held now: false
// once it has expired or was lost, which a late renewal does not undo.
func (l *Lease) Renewed(sent time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return false
	}
	if !l.now().Before(l.deadline) {
		// The timer has not run yet, but the deadline has passed: a request may have been cut
		// off already, and the lease ends here as it would have a moment later.
		l.cancel(ErrExpired)
		return false
	}
	if d := Until(sent, l.ttl); d.After(l.deadline) {
		l.deadline = d
	}
	return true
}

// Held reports whether the lease is certainly held now.
func (l *Lease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ctx.Err() == nil && l.now().Before(l.deadline)
}

// Deadline is when the lease stops being certain unless it is renewed.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Done is closed when the lease ends: expired or lost.
func (l *Lease) Done() <-chan struct{} { return l.ctx.Done() }

// Err is nil while the lease is held, then ErrExpired or the cause given to Lose.
func (l *Lease) Err() error {
	if l.ctx.Err() == nil {
		return nil
	}
	return context.Cause(l.ctx)
}

// Lose ends the lease with cause (another holder has it, say): every Bound context is
// cancelled at once. Lose after the end does nothing.
func (l *Lease) Lose(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer.Stop()
	l.cancel(cause)
}

// expired reports whether the deadline has passed, ending the lease if it has.
func (l *Lease) expired() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return true
	}
	if l.now().Before(l.deadline) {
		return false
	}
	l.cancel(ErrExpired)
	return true
}

// Bound returns a context for one call made on behalf of the lease (an SDK call, its retries
// included), and the Call that follows its requests. The context ends with parent or with the
// lease, whichever comes first, with the lease's cause, and its HTTP requests are checked
// against the deadline where they leave (see the package doc). One request at a time per
// context: the check follows one connection. Call.End releases it.
func (l *Lease) Bound(parent context.Context) (context.Context, *Call) {
	return l.bound(parent, false)
}

// BoundToWrite is Bound for a call whose answer is wanted even after the lease ends: the lease
// bounds when its requests may be written, not how long their answers may take. When the lease
// ends (expired or lost), the context is cancelled unless the call's request in flight was
// written already; that request is left to finish and bring its answer, and any further
// attempt of the call (a retry of the SDK's) is cancelled before it dials, as under Bound.
// Cancelling a written request would not call it back; it would only lose what the printer
// answered.
func (l *Lease) BoundToWrite(parent context.Context) (context.Context, *Call) {
	return l.bound(parent, true)
}

func (l *Lease) bound(parent context.Context, keepWritten bool) (context.Context, *Call) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &Call{cancel: cancel}
	c.stop = context.AfterFunc(l.ctx, func() {
		c.mu.Lock()
		last := c.last
		c.mu.Unlock()
		switch {
		case keepWritten && last == WasWritten:
			return
		case last == NotWritten:
			cancel(notSent(context.Cause(l.ctx)))
		default:
			cancel(context.Cause(l.ctx))
		}
	})
	// fenced stops the call's request where it stands once the lease has ended, and reports
	// whether it did. On HTTP/1 the connection is the request's own, and closing it before the
	// transport flushes the request stops every byte of it (at GotConn the protocol is not
	// known yet: the first header field, written to the buffer next, tells, and closes it
	// then). On HTTP/2 the connection carries other calls' requests and is never closed: the
	// cancelled context stops the request, as the transport checks it before it writes the
	// headers; once it writes them, the request may be written whatever happens.
	fenced := func(closeH1 bool) bool {
		if !l.expired() {
			return false
		}
		c.mu.Lock()
		h2Writing := c.h2 && c.fields
		c.mu.Unlock()
		if h2Writing {
			cancel(l.Err())
			return true
		}
		cancel(notSent(l.Err()))
		c.mu.Lock()
		h1 := c.fields && !c.h2
		c.mu.Unlock()
		if closeH1 && h1 {
			c.closeConn()
		}
		c.mu.Lock()
		c.gated, c.last = true, NotWritten
		c.mu.Unlock()
		return true
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) {
			c.mu.Lock()
			c.begun++
			c.last, c.gated, c.fields, c.h2 = NotWritten, false, false, false
			c.mu.Unlock()
			fenced(false)
		},
		GotConn: func(info httptrace.GotConnInfo) {
			c.mu.Lock()
			c.conn, c.last = info.Conn, MaybeWritten
			c.mu.Unlock()
			fenced(false)
		},
		WroteHeaderField: func(key string, _ []string) {
			c.mu.Lock()
			first := !c.fields
			if first {
				// HTTP/1 writes Host first, into the connection's buffer; HTTP/2 encodes its
				// pseudo-headers first, just before it writes the frame.
				c.fields, c.h2 = true, strings.HasPrefix(key, ":")
			}
			c.mu.Unlock()
			if first {
				fenced(true)
			}
		},
		WroteHeaders: func() {
			// On HTTP/1 the last moment before the request's bytes leave: the transport
			// flushes them after this hook returns.
			fenced(true)
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.conn = nil
			// net/http reports the request written once it is in the connection's buffer,
			// flushed right after; the fence's closed connection fails that flush.
			if info.Err == nil && !c.gated {
				c.last = WasWritten
				c.written++
			}
		},
	})
	return ctx, c
}

// notSent is the cause of a call stopped before its request had a connection, or before a
// byte of it was flushed: a failed dial, as net/http reports one. The SDK says that a request
// may have been sent (TransportError.MaybeSent) unless its error is a failed dial, so the
// request the fence stopped in time is reported as not sent whenever that cause is what the
// transport returns (it is when the request was still waiting for its connection; a request
// whose connection the fence closed may fail with the write's error instead, which the SDK
// reads as maybe sent, and Call.Attempts tells). errors.Is still finds the lease's cause.
func notSent(cause error) error { return &net.OpError{Op: "dial", Err: cause} }

// Call is one call made under a Bound context: it stops a request the lease no longer covers
// (on HTTP/1 by closing its connection, so that the transport's write of it fails instead of
// reaching the printer), and records how far its requests got.
type Call struct {
	cancel context.CancelCauseFunc
	stop   func() bool

	mu      sync.Mutex
	conn    net.Conn // of the request being written
	gated   bool     // the fence stopped the request before it was flushed
	fields  bool     // the request's first header field was written (to the buffer, on HTTP/1)
	h2      bool     // the request goes over HTTP/2, whose connection is shared
	begun   int
	written int
	last    Written
}

// End releases the context of the call.
func (c *Call) End() {
	c.stop()
	c.cancel(context.Canceled)
}

// Attempts returns how many requests the call began, how many of them were written in full,
// and how far the last one got.
func (c *Call) Attempts() (begun, written int, last Written) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.begun, c.written, c.last
}

func (c *Call) closeConn() {
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn == nil {
		return
	}
	// The socket itself: a TLS connection's Close would first write an alert on it.
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = nc.NetConn()
	}
	_ = conn.Close()
}

// Written says how far a request got before its call ended.
type Written int

const (
	// NotWritten: no byte of the request left this host (no connection was got for it, or
	// the fence closed the connection before the request was flushed).
	NotWritten Written = iota
	// MaybeWritten: a connection was got and the write did not complete, or failed part way.
	MaybeWritten
	// WasWritten: the transport wrote the whole request (into the connection's buffer, which
	// it flushes next).
	WasWritten
)

func (w Written) String() string {
	switch w {
	case NotWritten:
		return "not written"
	case MaybeWritten:
		return "maybe written"
	}
	return "written"
}
