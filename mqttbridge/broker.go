package mqttbridge

import (
	"io"
	"log/slog"
	"net"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
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
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort("", addr)
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	if l == nil {
		l = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv := mqtt.New(&mqtt.Options{Logger: l, InlineClient: false})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		return nil, err
	}
	tcp := listeners.NewTCP(listeners.Config{ID: "tcp", Address: addr})
	if err := srv.AddListener(tcp); err != nil {
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
	b.close.Do(func() { b.err = b.srv.Close() })
	return b.err
}
