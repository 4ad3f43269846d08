package mqttbridge

import (
	"context"
	"fmt"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// The back-off between attempts to subscribe to the commands after the broker refused (an
// ACL, say) or did not answer.
const (
	subscribeBackoff    = 500 * time.Millisecond
	maxSubscribeBackoff = 30 * time.Second
)

// subscribe subscribes to the commands on the connection that just came up, until the broker
// grants it (a SUBACK reason code below 0x80): "online" means taking commands, so nothing is
// published as online before. A refusal is logged with the broker's reason code and tried
// again with back-off. It returns false when ctx ends or this connection is lost first (down
// is closed; the next connection subscribes again).
func (b *Bridge) subscribe(ctx context.Context, cm *autopaho.ConnectionManager, down <-chan struct{}) bool {
	filter := commandFilter(b.cfg.TopicPrefix)
	sub := &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		// Retain Handling 2: a retained command is not replayed at each subscribe.
		{Topic: filter, QoS: 1, RetainHandling: 2},
	}}
	wait := subscribeBackoff
	for attempt := 0; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		suback, err := cm.Subscribe(sctx, sub)
		cancel()
		var reason byte
		if suback != nil && len(suback.Reasons) > 0 {
			reason = suback.Reasons[0]
		}
		switch {
		case err == nil && suback != nil && reason < 0x80:
			b.log.Debug("subscribed", "filter", filter, "granted_qos", reason)
			return true
		case reason == 0x91 && attempt < 10:
			// A broker that mixes up our packet identifier with one of its own answers 0x91;
			// the next attempt takes another identifier.
			continue
		case reason >= 0x80:
			b.log.Error("the broker refused the subscription to the commands; not online, trying again",
				"filter", filter, "reason", fmt.Sprintf("%#x", reason), "retry_in", wait)
		default:
			b.log.Warn("subscribing to the commands failed; not online, trying again", "filter", filter, "err", err, "retry_in", wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-down:
			t.Stop()
			return false
		case <-t.C:
		}
		wait = min(2*wait, maxSubscribeBackoff)
	}
}
