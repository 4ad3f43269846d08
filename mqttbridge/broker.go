package mqttbridge

import (
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is an MQTT 5 / 3.1.1 broker running in this process, for a plant in a box and for
// tests. It lets every client in and keeps sessions in memory only, so it belongs on
// loopback or a trusted network; a plant's broker is mosquitto or its like.
type Broker struct {
	srv   *mqtt.Server
	addr  string
	close sync.Once
	err   error
}

// StartBroker serves a broker on addr. An address without a host (":1883", or "1883") is
// bound to 127.0.0.1; port 0 picks a free port (see Addr). l receives the broker's own log
// lines; nil discards them.
func StartBroker(addr string, l *slog.Logger) (*Broker, error) {
	return startBroker(addr, l, connectWait)
}

// connectWait is how long the embedded broker waits for a new connection's CONNECT before it
// closes the connection: one that never sends it would otherwise hold a goroutine and a
// socket for good.
const connectWait = 10 * time.Second

// startBroker is StartBroker closing connections that send no CONNECT within wait.
func startBroker(addr string, l *slog.Logger, wait time.Duration) (*Broker, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort("", addr)
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	if l == nil {
		l = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	caps := mqtt.NewDefaultServerCapabilities()
	// mochi caps every message's life at 24 hours by default, whatever its Message Expiry
	// Interval and the session's expiry: a command queued for a bridge away longer would be
	// dropped. Without the cap a message lives as long as its session, or its own expiry.
	caps.MaximumMessageExpiryInterval = 0
	// mochi drops a QoS 1 message for a client holding 8,192 unacknowledged (its default),
	// and a bridge with a printer down holds a queue of commands: the most is the packet
	// identifiers' 65,535.
	caps.MaximumInflight = 65535
	caps.MaximumClientWritesPending = 65535
	srv := mqtt.New(&mqtt.Options{Logger: l, InlineClient: false, Capabilities: caps})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		return nil, err
	}
	if err := srv.AddHook(newPacketIDHook(), nil); err != nil {
		return nil, err
	}
	if err := srv.AddHook(newResumeHook(), nil); err != nil {
		return nil, err
	}
	if err := srv.AddHook(new(sessionHook), nil); err != nil {
		return nil, err
	}
	if err := srv.AddHook(new(sendQuotaHook), nil); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	tcp := newBrokerListener("tcp", ln, wait)
	if err := srv.AddListener(tcp); err != nil {
		_ = ln.Close()
		return nil, err
	}
	if err := srv.Serve(); err != nil {
		_ = srv.Close()
		return nil, err
	}
	return &Broker{srv: srv, addr: tcp.Address()}, nil
}

// Addr returns the address the broker listens on, such as "127.0.0.1:1883".
func (b *Broker) Addr() string { return b.addr }

// URL returns the broker's mqtt:// URL.
func (b *Broker) URL() string { return "mqtt://" + b.addr }

// Close disconnects every client (their Wills are published first) and stops the broker.
// Further calls do nothing.
func (b *Broker) Close() error {
	b.close.Do(func() {
		// mochi's own Close lists each listener's clients under a read lock it takes twice
		// (Clients.GetByListener calls Len): a client leaving at that moment, its Delete
		// waiting for the write lock between the two, deadlocks it. So the clients are
		// disconnected here first, listed under one read lock; mochi's Close then finds the
		// listener closed and does not list them again.
		b.srv.Listeners.CloseAll(func(listener string) {
			for _, cl := range b.srv.Clients.GetAll() {
				if cl.Net.Listener == listener && !cl.Closed() {
					_ = b.srv.DisconnectClient(cl, packets.ErrServerShuttingDown)
				}
			}
		})
		b.err = b.srv.Close()
	})
	return b.err
}

// sessionHook keeps the messages queued for a client with a persistent session (the bridge's
// commands) in the order they arrived. The broker resends them sorted by their Created time,
// which counts whole seconds, so messages of one second would come back in any order. Here
// each message gets a Created later than the one before. Created then runs ahead of the clock
// while more than one message a second arrives, which nothing reads once the cap on a
// message's life is lifted (a message's Message Expiry Interval is counted separately and
// still holds). The broker compares the low 16 bits only, so the order holds for 65,536
// messages in a row.
type sessionHook struct {
	mqtt.HookBase
	mu   sync.Mutex
	last int64
}

// ID names the hook.
func (h *sessionHook) ID() string { return "arrival-order" }

// Provides says the hook handles OnPublish.
func (h *sessionHook) Provides(b byte) bool { return b == mqtt.OnPublish }

// OnPublish gives pk a Created later than every earlier message's.
func (h *sessionHook) OnPublish(_ *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == 0 {
		// Start where the low 16 bits are 0, so 65,536 messages pass before they wrap.
		h.last = pk.Created | 0xffff
	}
	h.last = max(h.last+1, pk.Created)
	pk.Created = h.last
	return pk, nil
}

// sendQuotaHook turns off the library's flow control towards clients. A client's Receive
// Maximum (the bridge asks for one) makes it hold messages past the quota and send one for
// each packet the client sends, forgetting it as it goes out: a command sent that way and not
// yet acknowledged when the connection drops is lost, and a queue drains at a few messages a
// second. Without it every message goes out at once, as before the bridge asked; the broker
// keeps up to 65,535 unacknowledged per client (MaximumInflight) and a client's reads are
// its own to bound.
type sendQuotaHook struct{ mqtt.HookBase }

// ID names the hook.
func (h *sendQuotaHook) ID() string { return "no-send-quota" }

// Provides says the hook handles OnSessionEstablished.
func (h *sendQuotaHook) Provides(b byte) bool { return b == mqtt.OnSessionEstablished }

// OnSessionEstablished sets the client's send quota to none, which the library reads as no
// flow control.
func (h *sendQuotaHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	cl.State.Inflight.ResetSendQuota(0)
}
