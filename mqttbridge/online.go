package mqttbridge

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// OnlineState is the payload of <topic_prefix>/bridge/online (retained): which bridge process
// is taking commands under the prefix, or that it stopped. The bridge publishes it with State
// "online" once subscribed to the commands, "offline" on a clean stop, and "offline" is its
// connection's Will, so the broker marks it when the connection ends without a stop.
type OnlineState struct {
	// State is "online" or "offline".
	State string `json:"state"`
	// Instance names the process: host, process id and a random part, new at each start.
	Instance string `json:"instance"`
	// ClientID is the process's broker.client_id.
	ClientID string `json:"clientId"`
	// Pair says the process is one of a pair of bridges (outbox.postgres).
	Pair bool `json:"pair"`
}

// The values of OnlineState.State.
const (
	BridgeOnline  = "online"
	BridgeOffline = "offline"
)

// ErrAnotherBridgeOnline is what Run returns (wrapped, naming the other process) when, at
// start, <topic_prefix>/bridge/online says another bridge process is online: one with the
// same client id that is not of the same pair (the two would take the broker session from
// each other), or one with another client id (two bridges would answer each other's
// commands). Nothing was connected under the client id and nothing was executed.
var ErrAnotherBridgeOnline = errors.New("mqttbridge: another bridge is online under this topic_prefix")

// Timings of the check at start.
const (
	// onlineGrace is how long the check waits, after the broker acknowledged the subscription
	// and a second one that follows it, for a retained message that may still be on
	// its way (the embedded broker writes retained messages from another goroutine than its
	// acknowledgements). A broker that holds no retained message costs the start this long.
	onlineGrace = 100 * time.Millisecond
	// onlineHeldWait is how long a start that finds another instance online waits for its
	// "offline" (the Will of a process that just died) before refusing.
	onlineHeldWait = 2 * time.Second
	// checkTimeout bounds each subscription of the check.
	checkTimeout = 30 * time.Second
)

// newInstance names this process: host, process id and a random part.
func newInstance() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:10])
}

// onlinePayload is this bridge's OnlineState in the given state.
func (b *Bridge) onlinePayload(state string) []byte {
	p, _ := json.Marshal(OnlineState{State: state, Instance: b.instance, ClientID: b.cfg.Broker.ClientID, Pair: b.pair != nil})
	return p
}

// checkOnline reads the retained <topic_prefix>/bridge/online with a connection of its own
// (a client id of its own, clean start: the bridge's session is left alone) and returns an
// error wrapping ErrAnotherBridgeOnline when another bridge process holds it, unless that one
// is of the same pair as this one. It waits for the broker as long as ctx lasts and returns
// nil when ctx ends first. A broker that refuses the subscription (an ACL) leaves the check
// undone, with a warning.
func (b *Bridge) checkOnline(ctx context.Context) error {
	serverURL, err := url.Parse(b.cfg.Broker.URL)
	if err != nil {
		return fieldErr("broker.url", "not a URL")
	}
	topic := onlineTopic(b.cfg.TopicPrefix)
	var (
		mu   sync.Mutex
		last []byte
		seen = make(chan struct{}, 1)
	)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cc := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{serverURL},
		TlsCfg:                        b.tls,
		KeepAlive:                     keepAlive,
		CleanStartOnInitialConnection: true,
		ReconnectBackoff:              autopaho.NewExponentialBackoff(100*time.Millisecond, 10*time.Second, 500*time.Millisecond, 2),
		ConnectTimeout:                10 * time.Second,
		ConnectUsername:               b.cfg.Broker.Username,
		ConnectPassword:               b.password,
		OnConnectError: func(err error) {
			b.log.Warn("cannot connect to the broker", "err", connectError(err))
		},
		ClientConfig: paho.ClientConfig{
			ClientID: b.cfg.Broker.ClientID + "-check-" + rand.Text()[:6],
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){
				func(pr paho.PublishReceived) (bool, error) {
					if pr.Packet.Topic == topic {
						mu.Lock()
						last = pr.Packet.Payload
						mu.Unlock()
						select {
						case seen <- struct{}{}:
						default:
						}
					}
					return true, nil
				},
			},
		},
	}
	cm, err := autopaho.NewConnection(cctx, cc)
	if err != nil {
		return err
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
		defer dcancel()
		_ = cm.Disconnect(dctx)
	}()
	held := func() *OnlineState {
		mu.Lock()
		defer mu.Unlock()
		return b.otherOnline(last)
	}
	for {
		if err := cm.AwaitConnection(cctx); err != nil {
			return nil // ctx ended
		}
		reason, err := subscribeOnce(cctx, cm, topic, 0)
		if err == nil && reason < 0x80 {
			// The retained message follows the acknowledgement of the subscription, and
			// that of a second one (Retain Handling 2: no retained message again) follows
			// it on a broker that writes in order; onlineGrace covers one that does not.
			reason, err = subscribeOnce(cctx, cm, topic, 2)
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			b.log.Warn("cannot read the bridge's online topic; trying again", "topic", topic, "err", err)
			continue
		case reason >= 0x80:
			b.log.Warn("the broker refused the subscription to the bridge's online topic; starting without checking for another bridge",
				"topic", topic, "reason", fmt.Sprintf("%#x", reason))
			return nil
		}
		break
	}
	grace := time.NewTimer(onlineGrace)
	defer grace.Stop()
	select {
	case <-seen:
	case <-grace.C:
	case <-ctx.Done():
		return nil
	}
	// A process that just died has its Will published a moment later: wait for it.
	other := held()
	if other != nil {
		b.log.Info("another bridge is online under this topic_prefix; waiting for its offline before refusing to start",
			"topic", topic, "instance", other.Instance, "client_id", other.ClientID, "wait", onlineHeldWait)
	}
	wait := time.NewTimer(onlineHeldWait)
	defer wait.Stop()
	for other != nil {
		select {
		case <-seen:
			other = held()
			continue
		case <-wait.C:
		case <-ctx.Done():
			return nil
		}
		break
	}
	if other == nil {
		return nil
	}
	return b.refuse(topic, other)
}

// subscribeOnce subscribes to topic at QoS 0 with the given Retain Handling and returns the
// broker's reason code.
func subscribeOnce(ctx context.Context, cm *autopaho.ConnectionManager, topic string, retainHandling byte) (byte, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	suback, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: 0, RetainHandling: retainHandling}}})
	if err != nil {
		return 0, err
	}
	if len(suback.Reasons) == 0 {
		return 0, errors.New("the broker answered the subscription without a reason code")
	}
	return suback.Reasons[0], nil
}

// otherOnline returns the other bridge process that payload says is online, unless it is of
// this bridge's pair; nil when there is none.
func (b *Bridge) otherOnline(payload []byte) *OnlineState {
	if len(payload) == 0 || string(payload) == BridgeOffline {
		return nil
	}
	if string(payload) == BridgeOnline { // a version that published no instance
		return &OnlineState{State: BridgeOnline}
	}
	var s OnlineState
	if err := json.Unmarshal(payload, &s); err != nil {
		b.log.Warn("the bridge's online topic holds a payload no bridge wrote; ignoring it",
			"topic", onlineTopic(b.cfg.TopicPrefix), "bytes", len(payload))
		return nil
	}
	if s.State != BridgeOnline || s.Instance == b.instance {
		return nil
	}
	if s.ClientID == b.cfg.Broker.ClientID && s.Pair && b.pair != nil {
		b.log.Info("the other bridge of this pair is online; standing by for the lease", "active", s.Instance)
		return nil
	}
	return &s
}

// refuse is the error of a start that found other online.
func (b *Bridge) refuse(topic string, other *OnlineState) error {
	id := b.cfg.Broker.ClientID
	switch {
	case other.Instance == "":
		return fmt.Errorf("%w: %s says %q, as a bridge of an older version publishes it; refusing to start: stop it first (its Will or its clean stop says offline)",
			ErrAnotherBridgeOnline, topic, BridgeOnline)
	case other.ClientID == id && other.Pair:
		return fmt.Errorf("%w: %s says instance %s is online with the same client_id %q as one of a pair, and this bridge has no outbox.postgres; refusing to start: two processes with one client_id take the broker session from each other; use the pair's configuration",
			ErrAnotherBridgeOnline, topic, other.Instance, id)
	case other.ClientID == id:
		return fmt.Errorf("%w: %s says instance %s is online with the same client_id %q; refusing to start: two processes with one client_id take the broker session from each other; stop it, or run both as a pair with outbox.postgres",
			ErrAnotherBridgeOnline, topic, other.Instance, id)
	default:
		return fmt.Errorf("%w: %s says instance %s is online with client_id %q; refusing to start: two bridges under one topic_prefix answer each other's commands; give this one its own topic_prefix, or stop the other",
			ErrAnotherBridgeOnline, topic, other.Instance, other.ClientID)
	}
}
