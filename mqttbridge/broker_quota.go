package mqttbridge

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// quotaHook has the embedded broker send a client's messages without counting them against
// the client's Receive Maximum.
//
// mochi-mqtt (v2.7.9) keeps the count of a client's unacknowledged messages with the session,
// and copies it to the connection that takes the session over: a client that left with its
// Receive Maximum's worth unacknowledged finds its quota spent on the next connection, so
// the messages the broker took meanwhile are held back; and a message held back is sent
// later, and then taken out of the session, so its acknowledgement restores no quota and a
// connection lost before it comes loses the message. The bridge acknowledges its commands
// in order, once each is in its outbox, and a pair's active bridge leaves the broker with
// commands unacknowledged whenever it loses its lease: once the bridge asked for a Receive
// Maximum, the bridges' nemesis on the embedded broker found commands unanswered 45 s after
// the faults healed, and some printed after later ones, on a later connection
// (TestEmbeddedBrokerSessionQuota holds the simplest case).
// The hook clears the client's Receive Maximum as it connects, so mochi sends each message
// at once, as it did before the bridge asked for one; the bridge takes at most that many
// commands at a time all the same (paho holds the rest).
type quotaHook struct {
	mqtt.HookBase
}

// ID names the hook.
func (h *quotaHook) ID() string { return "no-send-quota" }

// Provides says which events the hook handles.
func (h *quotaHook) Provides(b byte) bool { return b == mqtt.OnConnect }

// OnConnect clears the send quota mochi set from the client's CONNECT.
func (h *quotaHook) OnConnect(cl *mqtt.Client, _ packets.Packet) error {
	cl.Properties.Props.ReceiveMaximum = 0
	cl.State.Inflight.ResetSendQuota(0)
	return nil
}
