package mqttbridge

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

// This file holds the Sparkplug B edge node's session, as the specification's chapters on
// topics and operational behaviour demand: a connection of its own with Clean Start and a
// Session Expiry of 0, an NDEATH Will (QoS 1) carrying bdSeq (sparkplugbdseq.go), NBIRTH with
// seq 0 and then a DBIRTH per printer before any data, seq one more (mod 256) on every message
// after, a Rebirth on NCMD with the same bdSeq, and a Primary Host's STATE honoured: the node is
// born only once the host said online with a timestamp not older than the last one it said, and
// on offline it publishes NDEATH, disconnects and starts over with a new CONNECT. Its metrics are
// in sparkplugmetrics.go, its commands in sparkplugcommands.go. The node runs while the bridge
// does; of a pair only the lease holder runs one.

// spbNode is the bridge's Sparkplug edge node.
type spbNode struct {
	b   *Bridge
	cfg SparkplugConfig
	// cmdCtx is the context of the commands it takes: the bridge's, which ends when it stops
	// taking commands.
	cmdCtx   context.Context
	bd       *bdSeqCounter
	software string
	// devices holds the printers in configuration order and each one's aliases.
	devices []*spbDevice
	byName  map[string]*spbDevice

	mu      sync.Mutex
	events  []spbEvent
	dirty   map[*spbDevice]bool
	wake    chan struct{}
	results map[*spbDevice]*spbResults
	labels  map[*spbDevice]*string // Job/Label; nil until this process sent a job

	// born is true while the node is born on a connection that is up (the metric).
	born atomic.Bool

	// The rest belongs to the node's goroutine.
	seq      uint8
	hostSeen bool   // a STATE of the Primary Host was taken
	hostTS   uint64 // its timestamp
	hostOn   bool   // and whether it said online
}

// spbEvent is a message for the node's goroutine: a Rebirth request, or a Primary Host's STATE.
type spbEvent struct {
	rebirth bool
	state   *sparkplug.State
}

func newSpbNode(b *Bridge, cfg SparkplugConfig, printers []*printer) *spbNode {
	n := &spbNode{b: b, cfg: cfg, byName: map[string]*spbDevice{}, dirty: map[*spbDevice]bool{},
		wake: make(chan struct{}, 1), results: map[*spbDevice]*spbResults{}, labels: map[*spbDevice]*string{},
		software: softwareName()}
	for i, p := range printers {
		d := &spbDevice{p: p, index: i}
		n.devices = append(n.devices, d)
		n.byName[p.name] = d
		n.results[d] = &spbResults{}
	}
	return n
}

// softwareName is Node Info/Software: the program and its version, as --version says it.
func softwareName() string {
	return "labelprinter-mqtt " + buildinfo.Get().Version
}

// The node's topics.
func (n *spbNode) topic(kind string) string {
	return sparkplugNamespace + "/" + n.cfg.GroupID + "/" + kind + "/" + n.cfg.EdgeNodeID
}
func (n *spbNode) deviceTopic(kind string, d *spbDevice) string {
	return n.topic(kind) + "/" + d.p.name
}
func (n *spbNode) stateTopic() string { return sparkplug.StateTopic(n.cfg.PrimaryHostID) }

// post hands ev to the node's goroutine; it never blocks.
func (n *spbNode) post(ev spbEvent) {
	n.mu.Lock()
	n.events = append(n.events, ev)
	n.mu.Unlock()
	n.poke()
}

func (n *spbNode) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// changed tells the node that something p's metrics show may have changed; it never blocks.
func (n *spbNode) changed(p *printer) {
	d := n.byName[p.name]
	if d == nil {
		return
	}
	n.mu.Lock()
	n.dirty[d] = true
	n.mu.Unlock()
	n.poke()
}

func nowMillis() uint64 { return uint64(time.Now().UnixMilli()) }

// spbConn is one connection of the node that is up; down is closed once it is gone.
type spbConn struct {
	cm   *autopaho.ConnectionManager
	down chan struct{}
}

// run keeps the node on the broker until ctx ends, then leaves: NDEATH, and a DISCONNECT with
// the Will (or the Will alone when the bridge lost its lease).
func (n *spbNode) run(ctx, cmdCtx context.Context, serverURL *url.URL) {
	n.cmdCtx = cmdCtx
	for ctx.Err() == nil {
		n.session(ctx, serverURL)
	}
}

// session is one connection manager, whose connections autopaho makes again after a loss, each
// with a CONNECT of its own bdSeq. It returns once ctx ends or the Primary Host said offline,
// after leaving the broker.
func (n *spbNode) session(ctx context.Context, serverURL *url.URL) {
	// Each connection that is up is followed by its loss before the next is up: the node's
	// goroutine takes them one by one, and the room left is never needed.
	ups := make(chan spbConn, 4)
	var down chan struct{}
	zero := uint32(0)
	cc := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{serverURL},
		TlsCfg:                        n.b.tls,
		KeepAlive:                     keepAlive,
		CleanStartOnInitialConnection: true,
		SessionExpiryInterval:         0,
		ReconnectBackoff:              autopaho.NewExponentialBackoff(100*time.Millisecond, 10*time.Second, 500*time.Millisecond, 2),
		ConnectTimeout:                10 * time.Second,
		ConnectUsername:               n.b.cfg.Broker.Username,
		ConnectPassword:               n.b.password,
		ConnectPacketBuilder: func(cp *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			// Every CONNECT starts clean with a session that ends with it, and carries the
			// next bdSeq in its Will.
			cp.CleanStart = true
			if cp.Properties == nil {
				cp.Properties = &paho.ConnectProperties{}
			}
			cp.Properties.SessionExpiryInterval = nil
			// The broker sends no DCMD larger than the bridge's own connection takes
			// (limits.max_packet_size): a larger one is dropped there, unread.
			size := n.b.cfg.Limits.MaxPacketSize
			cp.Properties.MaximumPacketSize = &size
			bd, err := n.bd.next(ctx)
			if err != nil {
				return nil, fmt.Errorf("recording the Sparkplug bdSeq: %w", err)
			}
			payload, err := n.deathPayload(bd)
			if err != nil {
				return nil, err
			}
			cp.WillMessage = &paho.WillMessage{Topic: n.topic("NDEATH"), Payload: payload, QoS: 1}
			cp.WillProperties = &paho.WillProperties{WillDelayInterval: &zero}
			return cp, nil
		},
		// An intentional DISCONNECT of MQTT 5 asks for the Will, as the specification demands.
		DisconnectPacketBuilder: func() *paho.Disconnect { return &paho.Disconnect{ReasonCode: 0x04} },
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			n.b.log.Info("the Sparkplug node connected to the broker", "client_id", n.cfg.ClientID, "bdSeq", n.bd.get())
			down = make(chan struct{})
			select {
			case ups <- spbConn{cm: cm, down: down}:
			default:
			}
		},
		OnConnectionDown: func() bool {
			close(down)
			if ctx.Err() == nil {
				n.b.log.Warn("the Sparkplug node's connection to the broker was lost; reconnecting")
			}
			return true
		},
		OnConnectError: func(err error) {
			n.bd.connectFailed(err)
			n.b.log.Warn("the Sparkplug node cannot connect to the broker", "err", connectError(err))
		},
		ClientConfig: paho.ClientConfig{
			ClientID: n.cfg.ClientID,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){
				func(pr paho.PublishReceived) (bool, error) {
					n.received(pr.Client, pr.Packet)
					return true, nil
				},
			},
		},
	}
	if n.b.cfg.Broker.Username == "" {
		cc.ConnectUsername = ""
	}
	connCtx, stopConn := context.WithCancel(context.WithoutCancel(ctx))
	defer stopConn()
	cm, err := autopaho.NewConnection(connCtx, cc)
	if err != nil {
		n.b.log.Error("the Sparkplug node cannot start", "err", err)
		<-ctx.Done()
		return
	}
	var cur *spbConn
	for {
		select {
		case <-ctx.Done():
			n.leave(cm, cur)
			return
		case c := <-ups:
			cur = &c
			if n.serve(ctx, c) {
				n.b.log.Info("the Primary Host is offline; the Sparkplug node leaves the broker and starts over", "host", n.cfg.PrimaryHostID)
				n.leave(cm, cur)
				return
			}
		}
	}
}

// leave ends the session: NDEATH, then a DISCONNECT asking for the Will (0x04); a bridge that
// lost its lease leaves at once with the Will alone.
func (n *spbNode) leave(cm *autopaho.ConnectionManager, cur *spbConn) {
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	if cur != nil && !n.b.fenced.Load() {
		select {
		case <-cur.down:
		default:
			if payload, err := n.deathPayload(n.bd.get()); err == nil {
				_, _ = cm.Publish(ctx, &paho.Publish{Topic: n.topic("NDEATH"), Payload: payload, QoS: 1})
			}
		}
	}
	_ = cm.Disconnect(ctx)
}

// serve runs one connection: it subscribes, waits for the Primary Host when one is configured,
// gives births and then data until the connection is gone or ctx ends (false), or the Primary
// Host said offline (true).
func (n *spbNode) serve(ctx context.Context, c spbConn) (hostOffline bool) {
	defer n.born.Store(false)
	subs := []paho.SubscribeOptions{
		{Topic: n.topic("NCMD"), QoS: 1},
		{Topic: n.topic("DCMD") + "/+", QoS: 1},
	}
	if n.cfg.PrimaryHostID != "" {
		subs = append([]paho.SubscribeOptions{{Topic: n.stateTopic(), QoS: 1}}, subs...)
	}
	sctx, cancel := context.WithTimeout(ctx, publishTimeout)
	_, err := c.cm.Subscribe(sctx, &paho.Subscribe{Subscriptions: subs})
	cancel()
	if err != nil {
		n.b.log.Warn("the Sparkplug node cannot subscribe", "err", err)
		select {
		case <-ctx.Done():
		case <-c.down:
		}
		return false
	}
	if !n.hostOnline() {
		n.b.log.Info("the Sparkplug node waits for the Primary Host to say online", "host", n.cfg.PrimaryHostID)
	}
	born := false
	for {
		if !born && n.hostOnline() {
			if !n.births(ctx, c.cm) {
				return n.untilDown(ctx, c)
			}
			born = true
			n.born.Store(true)
		}
		select {
		case <-ctx.Done():
			return false
		case <-c.down:
			return false
		case <-n.wake:
		}
		n.mu.Lock()
		evs := n.events
		n.events = nil
		n.mu.Unlock()
		for _, ev := range evs {
			switch {
			case ev.state != nil:
				wasOn := n.hostOnline()
				n.takeState(*ev.state)
				if born && wasOn && !n.hostOnline() {
					return true
				}
			case ev.rebirth && born:
				n.b.log.Info("Sparkplug Rebirth requested")
				if !n.births(ctx, c.cm) {
					return n.untilDown(ctx, c)
				}
			}
		}
		if born && !n.update(ctx, c.cm) {
			return n.untilDown(ctx, c)
		}
	}
}

// untilDown waits until a connection that failed a publish is gone, or ctx ends.
func (n *spbNode) untilDown(ctx context.Context, c spbConn) bool {
	select {
	case <-ctx.Done():
	case <-c.down:
	}
	return false
}

// hostOnline reports whether the node may be born: no Primary Host is configured, or it said
// online last.
func (n *spbNode) hostOnline() bool {
	return n.cfg.PrimaryHostID == "" || n.hostOn
}

// takeState applies a STATE of the Primary Host whose timestamp is not older than the last one
// taken; an older one is ignored.
func (n *spbNode) takeState(s sparkplug.State) {
	if n.hostSeen && s.Timestamp < n.hostTS {
		n.b.log.Info("ignoring a STATE of the Primary Host older than the last one", "online", s.Online, "timestamp", s.Timestamp, "last", n.hostTS)
		return
	}
	n.hostSeen, n.hostTS, n.hostOn = true, s.Timestamp, s.Online
}

// received takes one PUBLISH on the node's connection: the Primary Host's STATE, a Rebirth
// NCMD, or a DCMD (sparkplugcommands.go). It never blocks.
func (n *spbNode) received(cl *paho.Client, pb *paho.Publish) {
	switch {
	case n.cfg.PrimaryHostID != "" && pb.Topic == n.stateTopic():
		s, err := sparkplug.ParseState(pb.Payload)
		if err != nil {
			n.b.log.Warn("a STATE of the Primary Host that is not its JSON is ignored", "topic", pb.Topic, "err", err)
			return
		}
		n.post(spbEvent{state: &s})
	case pb.Topic == n.topic("NCMD"):
		n.nodeCommand(pb.Payload)
	default:
		n.deviceCommand(cl, pb)
	}
}

// nodeCommand takes an NCMD: Node Control/Rebirth true asks for the births again.
func (n *spbNode) nodeCommand(payload []byte) {
	pl, err := sparkplug.Unmarshal(payload)
	if err != nil {
		n.b.log.Warn("an NCMD that is not a Sparkplug B payload is ignored", "err", err)
		return
	}
	for _, m := range pl.Metrics {
		if m.Name == "Node Control/Rebirth" {
			if v, ok := m.Value.(bool); ok && v {
				n.post(spbEvent{rebirth: true})
			}
			continue
		}
		n.b.log.Info("an NCMD metric the node does not take is ignored", "metric", clip(m.Name))
	}
}

// publish sends a Sparkplug message at QoS 0 with the next seq (NDEATH, which has none, goes
// elsewhere); false when the connection failed it.
func (n *spbNode) publish(ctx context.Context, cm *autopaho.ConnectionManager, topic string, pl *sparkplug.Payload) bool {
	pl.HasSeq, pl.Seq = true, uint64(n.seq)
	n.seq++ // 255 + 1 is 0
	b, err := pl.Marshal()
	if err != nil {
		// Only a metric the node built wrong fails: a bug, logged, and the message left out.
		n.b.log.Error("a Sparkplug payload cannot be encoded", "topic", topic, "err", err)
		return true
	}
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if _, err := cm.Publish(pctx, &paho.Publish{Topic: topic, Payload: b, QoS: 0}); err != nil {
		n.b.log.Warn("a Sparkplug message could not be sent", "topic", topic, "err", err)
		return false
	}
	return true
}

// deathPayload is the NDEATH: the bdSeq of the connection, and no seq.
func (n *spbNode) deathPayload(bd uint8) ([]byte, error) {
	pl := sparkplug.Payload{Timestamp: nowMillis(), Metrics: []sparkplug.Metric{
		{Name: "bdSeq", Datatype: sparkplug.Int64, Value: int64(bd)},
	}}
	return pl.Marshal()
}

// births publishes NBIRTH (seq 0, the connection's bdSeq, Node Control/Rebirth false and Node
// Info/Software) and then a DBIRTH per printer, followed by its DDEATH when it is known not to
// answer; false when the connection failed a publish.
func (n *spbNode) births(ctx context.Context, cm *autopaho.ConnectionManager) bool {
	n.seq = 0
	ts := nowMillis()
	nb := &sparkplug.Payload{Timestamp: ts, Metrics: []sparkplug.Metric{
		{Name: "bdSeq", HasAlias: true, Alias: aliasBdSeq, Timestamp: ts, Datatype: sparkplug.Int64, Value: int64(n.bd.get())},
		// Without an alias, as the specification demands of this one metric.
		{Name: "Node Control/Rebirth", Timestamp: ts, Datatype: sparkplug.Boolean, Value: false},
		{Name: "Node Info/Software", HasAlias: true, Alias: aliasSoftware, Timestamp: ts, Datatype: sparkplug.String, Value: n.software},
	}}
	if !n.publish(ctx, cm, n.topic("NBIRTH"), nb) {
		return false
	}
	n.mu.Lock()
	n.dirty = map[*spbDevice]bool{}
	n.mu.Unlock()
	for _, d := range n.devices {
		if !n.birth(ctx, cm, d) {
			return false
		}
	}
	return true
}
