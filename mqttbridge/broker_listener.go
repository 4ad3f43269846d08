package mqttbridge

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// brokerListener is the embedded broker's TCP listener. It differs from the library's own in
// two ways:
//
//   - Each connection it accepts gets a deadline wait away. The broker replaces it with the
//     keep-alive's once it has read the CONNECT, so only a connection that sends none in time
//     (or stalls sending it) is closed by it.
//   - Close returns only once every connection it handed to the broker is finished. The
//     library's listener hands each one over in a goroutine of its own, which registers with
//     the broker's wait group (Add) while the broker's Close may already be waiting on that
//     group: a connection accepted just before a Close raced with it. Here every hand-over is
//     counted before Accept's next call, Close stops taking new ones, closes what is still
//     open once the broker has disconnected its clients, and waits for the hand-overs to end,
//     so the broker's wait starts with none under way.
type brokerListener struct {
	id   string
	ln   net.Listener
	wait time.Duration
	log  *slog.Logger

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	serves sync.WaitGroup
}

var _ listeners.Listener = (*brokerListener)(nil)

// newBrokerListener serves the broker on ln, closing connections that send no CONNECT within
// wait.
func newBrokerListener(id string, ln net.Listener, wait time.Duration) *brokerListener {
	return &brokerListener{id: id, ln: ln, wait: wait, conns: make(map[net.Conn]struct{})}
}

// ID returns the listener's id.
func (l *brokerListener) ID() string { return l.id }

// Address returns the address the listener listens on.
func (l *brokerListener) Address() string { return l.ln.Addr().String() }

// Protocol returns the listener's network, "tcp".
func (l *brokerListener) Protocol() string { return l.ln.Addr().Network() }

// Init keeps the broker's logger for the connections that fail.
func (l *brokerListener) Init(log *slog.Logger) error {
	l.log = log
	return nil
}

// Serve accepts connections until the listener is closed, handing each to establish.
func (l *brokerListener) Serve(establish listeners.EstablishFn) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		_ = c.SetDeadline(time.Now().Add(l.wait))
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			_ = c.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.serves.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.serves.Done()
			err := establish(l.id, c)
			_ = c.Close()
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
			if err != nil && l.log != nil {
				l.log.Warn("", "error", err)
			}
		}()
	}
}

// Close stops accepting, has closeClients disconnect the broker's clients on this listener
// (the first time only), closes every connection still open and waits for each hand-over to
// end.
func (l *brokerListener) Close(closeClients listeners.CloseFn) {
	l.mu.Lock()
	first := !l.closed
	l.closed = true
	l.mu.Unlock()
	if first {
		_ = l.ln.Close()
		closeClients(l.id)
		// A connection still waiting for its CONNECT, or one that connected after the
		// clients were listed, is not among the clients closeClients found.
		l.mu.Lock()
		for c := range l.conns {
			_ = c.Close()
		}
		l.mu.Unlock()
	}
	l.serves.Wait()
}
