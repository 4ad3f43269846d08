package mqttbridge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/httpcreds"
	"github.com/labelprinter/go-labelprinter/outbox"
	promconfig "github.com/prometheus/common/config"
)

// Option configures a Bridge in New.
type Option func(*options) error

type options struct {
	logger  *slog.Logger
	orphans OrphanPolicy
	crash   func(kind, point string)
	connUp  func()
	late    func(report func())
}

// WithLogger logs connections, commands refused and failures to l. Nothing is logged
// without it.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("mqttbridge.WithLogger: logger is nil")
		}
		o.logger = l
		return nil
	}
}

// Timings of the connection and of a stop.
const (
	keepAlive = 30
	// ackInterval is how often acknowledgements are flushed to the broker, in order.
	ackInterval = 20 * time.Millisecond
	// stopGrace bounds how long a stop waits for the broker to take the last results and
	// the offline message.
	stopGrace = 10 * time.Second
	// abortTimeout bounds an abortPrint, retries included.
	abortTimeout = time.Minute
	// maxWatchBackoff caps the wait before a failed watch is started again.
	maxWatchBackoff = 30 * time.Second
)

// Bridge puts printers on an MQTT broker: it publishes their status and counters and takes
// commands, sending each print command at most once through an outbox. It is made by New and
// runs in Run.
type Bridge struct {
	cfg      Config
	log      *slog.Logger
	password []byte
	tls      *tls.Config
	printers map[string]*printer // by topic segment
	// instance names this process in <topic_prefix>/bridge/online (see OnlineState).
	instance string
	ctls     []*controller
	pub      *publisher
	recv     *recvSession // paho's session, which cuts down the commands it keeps (recvpackets.go)
	// crash, when set (by tests), is called at each point where a process may die while it
	// handles a command: see crashPoint.
	crash func(kind, point string)
	// connUp, when set (by tests), is called as each connection is up, before anything of it
	// is done: see withConnectionUp.
	connUp func()
	// late, when set (by tests), runs each report that a connection is gone: see
	// withLateLossReport.
	late func(report func())
	// pair is the database a pair of bridges shares; nil with state_dir.
	pair   *pair
	fenced atomic.Bool // the lease was lost: leave the broker with the Will, publish nothing
	// takeover tells a broker session taken over by another process from an outage; taken
	// holds the error that stopped the bridge for it.
	takeover takeoverWatch
	taken    atomic.Pointer[error]

	ran      atomic.Bool
	stopping atomic.Bool
	stopCh   chan struct{}
	ackers   sync.WaitGroup // goroutines waiting to acknowledge a command
	aborts   sync.WaitGroup // abortPrints being sent

	mu      sync.Mutex
	waiting map[entryKey]*waiter
	replies map[entryKey]reply
	// aborting holds, per printer, a channel closed when its abortPrint in flight is answered.
	aborting map[*printer]chan struct{}
	// queued holds, per printer, the commands taken and not handled yet, in arrival order
	// (commandorder.go); a printer is in it exactly while its worker runs. nil holds those
	// whose topic names no printer of this bridge.
	queued  map[*printer][]heldCommand
	stopped bool // no command is taken any more
	// workers are the printers' goroutines; executing counts the commands they are handling.
	workers   sync.WaitGroup
	executing sync.WaitGroup
	// reps follows results to the broker, so that one lost with the process is published again.
	reps *reports
	// met is what Collector and Health report (metrics.go).
	met *metrics
	// spb is the Sparkplug edge node; nil without a sparkplug block.
	spb *spbNode
}

// entryKey names an outbox entry: ids are unique per controller's outbox.
type entryKey struct {
	ctl *controller
	id  string
}

// waiter is a command being enqueued, waiting for its queued result to reach the broker.
type waiter struct{ done chan struct{} }

// reply is where a command's results go besides P/result: its MQTT 5 Response Topic, and the
// Command/LastResult of the Sparkplug device it came to.
type reply struct {
	topic string
	corr  []byte
	spb   *printer
}

// controller is one controller URL: one client, one outbox file, one status watch.
type controller struct {
	url      string
	client   *labelprinter.Client
	ob       *outbox.Outbox
	view     *outboxView // what P/outbox shows of ob
	led      ledgerStore // abortPrint, cancel and resend records
	printers []*printer
	byRemote map[string]*printer

	mu     sync.Mutex
	status *labelprinter.PrinterStatus // nil while /status does not answer
	// statusClass and statusReason say why the last /status read failed (readerror.go);
	// empty once it answers.
	statusClass, statusReason string
}

// printer is one printer and its last published state.
type printer struct {
	name   string // topic segment
	remote string // its name on the controller
	index  int    // its place in the configuration's printers
	ctl    *controller
	prefix string

	mu        sync.Mutex
	read      bool // a counters read has been tried
	reachable bool
	statusKey string // the last status payload without its time
	statusMsg []byte
	countMsg  []byte
	// counters is the last read of its counters; nil before one succeeded.
	counters *labelprinter.PrintCounters
	// errClass and errReason say why the last counters read failed (readerror.go); empty
	// once one succeeds.
	errClass, errReason string
}

func (p *printer) topic(leaf string) string { return printerTopic(p.prefix, p.name, leaf) }

// New checks cfg, reads the broker's password file and opens one outbox per controller URL
// in cfg.StateDir (an outbox another process holds gives outbox.ErrLocked). An outbox file
// in cfg.StateDir that no configured controller owns and that holds pending or unknown
// entries gives an *OrphanedOutboxError unless WithOrphanedOutbox says what to do. cfg.Broker.URL
// must be set. Configuration errors are *ConfigError. Close releases what New opened when
// Run is never called.
func New(cfg Config, opts ...Option) (*Bridge, error) {
	o := options{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("mqttbridge.New: nil option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	cfg.Printers = append([]PrinterConfig(nil), cfg.Printers...)
	if cfg.Sparkplug != nil {
		s := *cfg.Sparkplug
		cfg.Sparkplug = &s
	}
	// The spellings as written name the files of versions that did not normalise URLs.
	var rawURLs []string
	for _, p := range cfg.Printers {
		rawURLs = append(rawURLs, p.URL)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Broker.URL == "" {
		return nil, fieldErr("broker.url", "required (or run an embedded broker)")
	}
	b := &Bridge{
		cfg:      cfg,
		log:      o.logger,
		crash:    o.crash,
		connUp:   o.connUp,
		late:     o.late,
		printers: map[string]*printer{},
		stopCh:   make(chan struct{}),
		waiting:  map[entryKey]*waiter{},
		replies:  map[entryKey]reply{},
		aborting: map[*printer]chan struct{}{},
		queued:   map[*printer][]heldCommand{},
		reps:     newReports(),
		met:      newMetrics(),
		takeover: takeoverWatch{clientID: cfg.Broker.ClientID},
		instance: newInstance(),
	}
	b.pub = newPublisher(b.log)
	b.recv = newRecvSession(b.pub.store.sess)
	var err error
	if cfg.Broker.PasswordFile != "" {
		if b.password, err = readPassword(cfg.Broker.PasswordFile); err != nil {
			return nil, &ConfigError{Field: "broker.password_file", Err: err}
		}
	}
	if cfg.Broker.TLSConfig != nil {
		if b.tls, err = promconfig.NewTLSConfig(cfg.Broker.TLSConfig); err != nil {
			return nil, &ConfigError{Field: "broker.tls_config", Err: err}
		}
	}
	if !cfg.pairMode() {
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, &ConfigError{Field: "state_dir", Err: err}
		}
	}
	byURL := map[string]*controller{}
	for i, pc := range cfg.Printers {
		ctl := byURL[pc.URL]
		if ctl == nil {
			hc, creds, err := httpcreds.NewClient(pc.HTTPClientConfig, "labelprinter-mqtt")
			if err != nil {
				b.closeOutboxes()
				return nil, &ConfigError{Field: fmt.Sprintf("printers[%d].http_client_config", i), Err: err}
			}
			// The round tripper adds the credentials out of the SDK's sight: telling it their
			// values keeps them out of every error, and so out of the "error" a topic carries.
			// creds holds what the config names (credential files re-read, so a file rotated
			// while the bridge runs is redacted at once) and what the transport was seen
			// sending (an OAuth2 access token, which no file holds); the SDK asks for them
			// when it builds an error, which keeps polls that succeed free of file reads and
			// keeps the one Client the outbox holds. The values read at start stay listed,
			// for an answer to a request sent before a rotation.
			c, err := labelprinter.NewClient(pc.URL, labelprinter.WithHTTPClient(hc),
				labelprinter.WithRedactedValues(creds.Source.Values()...),
				labelprinter.WithRedactedValuesFunc(creds.Values))
			if err != nil {
				b.closeOutboxes()
				return nil, &ConfigError{Field: fmt.Sprintf("printers[%d].url", i), Err: err}
			}
			ctl = &controller{url: pc.URL, client: c, byRemote: map[string]*printer{}}
			byURL[pc.URL] = ctl
			b.ctls = append(b.ctls, ctl)
		}
		p := &printer{name: pc.Name, remote: pc.Printer, index: i, ctl: ctl, prefix: cfg.TopicPrefix}
		ctl.printers = append(ctl.printers, p)
		ctl.byRemote[pc.Printer] = p
		b.printers[pc.Name] = p
	}
	if cfg.Sparkplug != nil {
		var ps []*printer
		for _, pc := range cfg.Printers {
			ps = append(ps, b.printers[pc.Name])
		}
		b.spb = newSpbNode(b, *cfg.Sparkplug, ps)
	}
	if cfg.pairMode() {
		if o.orphans.Ignore || o.orphans.AdoptInto != "" {
			b.closeOutboxes()
			return nil, fieldErr("outbox.postgres", "set, but an orphaned outbox policy was given: it is about outbox files in state_dir, and a PostgreSQL outbox has none")
		}
		// The outboxes are opened once the lease is held: a standby hears nothing of them.
		if b.pair, err = openPair(context.Background(), &b.cfg); err != nil {
			b.closeOutboxes()
			return nil, err
		}
		b.instance = b.pair.owner // one name in the lease row and on the broker
		if b.spb != nil {
			b.spb.bd = &bdSeqCounter{store: newPgBdSeq(b.pair, cfg.Sparkplug.ClientID)}
		}
		return b, nil
	}
	var urls []string
	for _, ctl := range b.ctls {
		urls = append(urls, ctl.url)
	}
	orphans, err := checkOrphans(cfg.StateDir, urls, rawURLs, o.orphans)
	if err != nil {
		b.closeOutboxes()
		return nil, err
	}
	for _, or := range orphans {
		if o.orphans.Ignore {
			b.log.Warn("ignoring an outbox no configured printer owns", "file", or.File, "url", or.URL, "pending", or.Pending, "unknown", or.Unknown)
		} else {
			b.log.Warn("adopted an outbox no configured printer owned", "file", or.File, "url", or.URL, "into", NormalizeURL(o.orphans.AdoptInto), "pending", or.Pending, "unknown", or.Unknown)
		}
	}
	if b.spb != nil {
		b.spb.bd = &bdSeqCounter{store: fileBdSeq{path: bdSeqFile(cfg.StateDir, cfg.Sparkplug.ClientID)}}
	}
	for _, ctl := range b.ctls {
		file := StateFile(cfg.StateDir, ctl.url)
		if err := recordURL(file, ctl.url); err != nil {
			b.closeOutboxes()
			return nil, &ConfigError{Field: "state_dir", Err: err}
		}
		ob, err := outbox.Open(file, ctl.client,
			outbox.WithStateChange(func(e outbox.Entry) { b.entryChanged(ctl, e) }))
		if err != nil {
			b.closeOutboxes()
			return nil, err
		}
		ctl.ob = ob
		if ctl.led, err = openLedger(ledgerFile(file)); err != nil {
			b.closeOutboxes()
			return nil, err
		}
		if ctl.view, err = newOutboxView(ob); err != nil {
			b.closeOutboxes()
			return nil, err
		}
	}
	return b, nil
}

func (b *Bridge) closeOutboxes() {
	for _, ctl := range b.ctls {
		if ctl.ob != nil {
			_ = ctl.ob.Close()
		}
		if ctl.led != nil {
			_ = ctl.led.close()
		}
		_ = ctl.client.Close()
	}
	if b.pair != nil {
		b.pair.close()
	}
}

// Close releases the outbox files and clients of a Bridge whose Run was never called; Run
// releases them itself.
func (b *Bridge) Close() error {
	if b.ran.Swap(true) {
		return nil
	}
	close(b.pub.stopped) // no publisher runs: what the outboxes report on closing goes nowhere
	b.closeOutboxes()
	return nil
}

// Run connects to the broker and bridges until ctx ends, riding out broker and printer
// outages. When ctx ends it stops taking commands (those not yet taken stay unacknowledged
// with the broker, and the subscription stays), lets print jobs in flight finish or become
// unknown, publishes their results and "offline", disconnects and returns nil; without a
// connection to the broker at that moment it waits for none (the broker published the Will,
// and the results go out at the next start). Run may be called once. At start, Run refuses to connect when <topic_prefix>/bridge/online says another
// bridge process is online (see [ErrAnotherBridgeOnline]). When another connection with
// broker.client_id takes the broker session, Run stops at once without reconnecting or
// publishing "offline" (the other process is online) and returns an error wrapping
// [ErrSessionTakenOver].
func (b *Bridge) Run(ctx context.Context) error {
	if ctx == nil {
		return errors.New("mqttbridge.Run: nil context")
	}
	if b.ran.Swap(true) {
		return errors.New("mqttbridge.Run: called twice, or after Close")
	}
	if err := b.checkOnline(ctx); err != nil || ctx.Err() != nil {
		close(b.pub.stopped) // no publisher runs
		b.closeOutboxes()
		return err
	}
	if b.pair != nil {
		return b.runPair(ctx)
	}
	return b.bridge(ctx)
}

// bridge connects to the broker and bridges until ctx ends, or until another connection
// takes its session (then it returns that error).
func (b *Bridge) bridge(ctx context.Context) error {
	serverURL, err := url.Parse(b.cfg.Broker.URL)
	if err != nil {
		b.closeOutboxes()
		return fieldErr("broker.url", "not a URL")
	}
	b.met.active.Store(true)
	defer b.met.active.Store(false)
	defer b.met.connected.Store(false)
	// A session taken over stops the bridge as the end of ctx does.
	ctx, takenOver := context.WithCancel(ctx)
	defer takenOver()
	connCtx, stopConn := context.WithCancel(context.WithoutCancel(ctx))
	defer stopConn()
	// stopTakenOver stops the bridge for a session taken over, once: OnConnectionDown and
	// OnServerDisconnect both may find it, in either order.
	stopTakenOver := func(err error) {
		if b.taken.CompareAndSwap(nil, &err) {
			b.log.Error("the broker session was taken over; stopping, not reconnecting",
				"client_id", b.cfg.Broker.ClientID, "err", err)
		}
		takenOver()
	}
	zero := uint32(0)
	// down is closed once the connection that is up is gone. autopaho calls OnConnectionUp and
	// OnConnectionDown one after the other on one goroutine, after the connection's paho client
	// shut down: so down always belongs to its own connection, unlike OnClientError's and
	// OnServerDisconnect's reports, which may come once the next one is up.
	var down chan struct{}
	// up says whether a connection is up now: a bridge stopping without one waits for no
	// broker (see the end of this function).
	var up atomic.Bool
	cc := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{serverURL},
		TlsCfg:                        b.tls,
		KeepAlive:                     keepAlive,
		CleanStartOnInitialConnection: false,
		SessionExpiryInterval:         uint32(b.cfg.Broker.SessionExpiry / time.Second),
		ReconnectBackoff:              autopaho.NewExponentialBackoff(100*time.Millisecond, 10*time.Second, 500*time.Millisecond, 2),
		ConnectTimeout:                10 * time.Second,
		// The broker sends no command larger than the cap, nor more unacknowledged than the
		// Receive Maximum: without it paho takes up to 65,535 of them off the connection
		// while the printers' workers commit them one at a time, and holds them all.
		ConnectPacketBuilder: func(cp *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			b.cfg.Limits.connectLimits(cp)
			return cp, nil
		},
		ConnectUsername: b.cfg.Broker.Username,
		ConnectPassword: b.password,
		WillMessage: &paho.WillMessage{
			Topic: onlineTopic(b.cfg.TopicPrefix), Payload: b.onlinePayload(BridgeOffline), QoS: 1, Retain: true,
		},
		// paho's default delays the Will by twice the keep-alive; the plant should know at once.
		WillProperties: &paho.WillProperties{WillDelayInterval: &zero},
		// A bridge that lost its lease leaves with its Will: offline until another one is active.
		DisconnectPacketBuilder: func() *paho.Disconnect {
			if b.fenced.Load() {
				return &paho.Disconnect{ReasonCode: 0x04} // Disconnect with Will Message
			}
			return &paho.Disconnect{ReasonCode: 0}
		},
		OnConnectionUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			if b.connUp != nil {
				b.connUp()
			}
			b.takeover.up(time.Now())
			up.Store(true)
			b.log.Info("connected to the broker", "url", serverURL.Redacted())
			down = make(chan struct{})
			go b.connected(connCtx, cm, down)
		},
		OnConnectionDown: func() bool {
			up.Store(false)
			b.met.connected.Store(false)
			close(down)
			now := time.Now()
			b.takeover.awaitReason(takeoverReasonWait)
			if err := b.takeover.down(now); err != nil {
				stopTakenOver(err)
				return false
			}
			b.log.Warn("connection to the broker lost; reconnecting")
			return true
		},
		OnConnectError: func(err error) {
			b.log.Warn("cannot connect to the broker", "err", connectError(err))
		},
		ClientConfig: paho.ClientConfig{
			ClientID: b.cfg.Broker.ClientID,
			// Both say the connection is gone, once paho has shut it down, on goroutines of
			// their own: the next connection may be up by then. A command follows the paho
			// client it came on (its Done), never these.
			OnClientError: func(error) { b.connectionLost() },
			OnServerDisconnect: func(d *paho.Disconnect) {
				b.takeover.serverDisconnect(d.ReasonCode)
				if d.ReasonCode == reasonSessionTakenOver {
					// This report may come after OnConnectionDown has already let the
					// connection go as an outage: it stops the bridge itself.
					stopTakenOver(b.takeover.saidTakenOver())
				}
				b.connectionLost()
			},
			// Counts each message's tries, so one the broker disconnects over is dropped.
			Session:                    b.recv,
			EnableManualAcknowledgment: true,
			SendAcksInterval:           ackInterval,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){
				func(pr paho.PublishReceived) (bool, error) {
					b.onCommand(ctx, pr.Client, pr.Packet)
					b.recv.release(pr.Packet)
					return true, nil
				},
			},
		},
	}
	if b.cfg.Broker.Username == "" {
		cc.ConnectUsername = ""
	}
	// Results lost with the last process go out first, before any command is taken.
	for _, ctl := range b.ctls {
		if err := b.republish(ctl); err != nil {
			b.log.Error("cannot tell which results the broker took before the bridge stopped", "url", ctl.url, "err", err)
		}
	}
	cm, err := autopaho.NewConnection(connCtx, cc)
	if err != nil {
		b.closeOutboxes()
		return err
	}

	pubCtx, stopPub := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPub()
	pubDone := make(chan struct{})
	go func() { defer close(pubDone); b.pub.run(pubCtx, cm) }()
	repCtx, stopReps := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReps()
	repDone := make(chan struct{})
	go func() { defer close(repDone); b.markReports(repCtx) }()
	pruneCtx, stopPrune := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPrune()
	pruneDone := make(chan struct{})
	go func() { defer close(pruneDone); b.prune(pruneCtx) }()

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	// The Sparkplug node leaves after the last commands' outcomes, or at once when the lease
	// is lost.
	nodeCtx, stopNode := context.WithCancel(context.WithoutCancel(ctx))
	defer stopNode()
	nodeDone := make(chan struct{})
	if b.spb != nil {
		spbURL := serverURL
		if b.spb.cfg.BrokerURL != "" {
			spbURL, _ = url.Parse(b.spb.cfg.BrokerURL) // Validate checked it
		}
		b.spb.restoreResults()
		go func() { defer close(nodeDone); b.spb.run(nodeCtx, ctx, spbURL) }()
	} else {
		close(nodeDone)
	}
	var workers sync.WaitGroup
	for _, ctl := range b.ctls {
		workers.Add(2)
		go func() { defer workers.Done(); b.runOutbox(runCtx, ctl) }()
		go func() { defer workers.Done(); b.watchStatus(runCtx, ctl) }()
		for _, p := range ctl.printers {
			workers.Add(1)
			go func() { defer workers.Done(); b.watchCounters(runCtx, p) }()
		}
	}

	<-ctx.Done()
	// Stop taking commands: a command not yet taken stays unacknowledged with the broker.
	b.stopping.Store(true)
	b.met.active.Store(false)
	fenced := b.fenced.Load()
	taken := b.taken.Load()
	if fenced {
		// Off the broker at once, before the lease can have run out: the commands taken
		// and not acknowledged go to the next bridge, which finds them in the shared outbox.
		_ = cm.Disconnect(context.WithoutCancel(ctx))
		stopNode()
		<-nodeDone
	}
	// Waits for the commands being handled; later ones see stopping and are left alone.
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.executing.Wait()
	// Commands taken are acknowledged once their first result is out, which the publisher,
	// still running, sees to; after stopGrace they are left unacknowledged (redelivered, and
	// then duplicates).
	// Without a connection nothing goes out: the broker has published the Will (offline), the
	// results stay in the publisher's store for the next run, and the commands not
	// acknowledged come again to it, which finds their ids. Waiting would only delay the stop.
	grace := stopGrace
	if !up.Load() {
		grace = 0
		b.log.Info("stopping while the broker is not connected: the results not yet published go out at the next start")
	}
	acked := make(chan struct{})
	go func() { b.ackers.Wait(); close(acked) }()
	ackWait := time.NewTimer(grace)
	select {
	case <-acked:
	case <-ackWait.C:
	}
	ackWait.Stop()
	close(b.stopCh)
	b.ackers.Wait()
	b.aborts.Wait()
	b.workers.Wait() // each sees stopped once its printer's abortPrint is answered
	stopNode()
	<-nodeDone
	stopRun()
	for _, ctl := range b.ctls {
		// Close lets a print job in flight settle (sent, or unknown) before it returns.
		_ = ctl.ob.Close()
	}
	workers.Wait()
	for _, ctl := range b.ctls {
		_ = ctl.client.Close()
	}
	if !fenced && taken == nil && grace > 0 {
		offline := &message{topic: onlineTopic(b.cfg.TopicPrefix), payload: b.onlinePayload(BridgeOffline), retain: true, done: make(chan struct{})}
		b.pub.push(offline)
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case <-offline.done:
			// Acknowledgements are flushed every ackInterval; let the last batch go out.
			time.Sleep(2 * ackInterval)
		case <-grace.C:
			b.log.Warn("the broker did not take the last results in time")
		}
	}
	stopPub()
	<-pubDone
	stopPrune()
	<-pruneDone
	// The marks of the last results the broker took, then the ledgers close.
	stopReps()
	<-repDone
	for _, ctl := range b.ctls {
		_ = ctl.led.close()
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	_ = cm.Disconnect(dctx)
	_ = b.pub.store.sess.Close()
	if taken != nil {
		return *taken
	}
	return nil
}

// connectionLost is autopaho's report that a connection is gone, which may come once the next
// one is up: it touches nothing of the connection that is current.
func (b *Bridge) connectionLost() {
	report := func() { b.log.Debug("connection lost") }
	if b.late != nil {
		b.late(report)
		return
	}
	report()
}

// withLateLossReport has f run the bridge's handling of each report that a connection is gone,
// when it likes: the tests' way to have one come as late as autopaho's goroutines can make it.
func withLateLossReport(f func(report func())) Option {
	return func(o *options) error { o.late = f; return nil }
}

// withConnectionUp has f called as each connection is up, before the bridge does anything with
// it: the tests' way to have the broker's first messages on it come first.
func withConnectionUp(f func()) Option {
	return func(o *options) error { o.connUp = f; return nil }
}

// connected runs after every (re)connect: subscribe again and, once the broker granted it,
// publish online and every printer's state, changed or not. down is closed once that
// connection is gone.
func (b *Bridge) connected(ctx context.Context, cm *autopaho.ConnectionManager, down <-chan struct{}) {
	if !b.subscribe(ctx, cm, down) {
		return
	}
	b.met.connected.Store(true)
	b.pub.push(&message{topic: onlineTopic(b.cfg.TopicPrefix), payload: b.onlinePayload(BridgeOnline), retain: true})
	for _, ctl := range b.ctls {
		for _, p := range ctl.printers {
			// Pushed under the printer's lock, so a newer state pushed by its watch cannot be
			// overtaken by this older one.
			p.mu.Lock()
			if p.statusMsg != nil {
				b.pub.push(&message{topic: p.topic(topicStatus), payload: p.statusMsg, retain: true})
			}
			if p.countMsg != nil {
				b.pub.push(&message{topic: p.topic(topicCounters), payload: p.countMsg, retain: true})
			}
			p.mu.Unlock()
			b.publishOutbox(p)
		}
	}
}
