package mqttbridge

import (
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// packetIDHook keeps a client's packet identifiers apart from the broker's own.
//
// mochi-mqtt (v2.7.9) keeps, per client, one map of packet identifiers for both directions:
// the messages it sent the client and awaits a PUBACK for, and the QoS 1 and 2 messages the
// client publishes. MQTT makes the two independent (MQTT 5 §2.2.1), and paho, like mochi,
// numbers its packets 1, 2, 3, ..., so a client that publishes while it holds messages
// unacknowledged (the bridge publishes results before it acknowledges a command) soon uses
// an identifier the broker has outstanding. mochi then takes the client's PUBLISH for one it
// knows and deletes its own message from the session (or overwrites it with the PUBACK and
// deletes that): the message was sent once, and if the client goes away before
// acknowledging it, it is never sent again. TestMochiPacketIDCollision shows it.
//
// The hook hands each QoS 1 PUBLISH of a client to mochi as a QoS 0 one without an
// identifier (so it passes mochi's checks without looking into the map), gives it back its
// QoS 1 before mochi acknowledges and delivers it, and writes the client's identifier back
// into the PUBACK, which mochi files under identifier 0: one it never gives a message of
// its own, and free again once that PUBACK is written. A client's packets are handled one at
// a time, so one saved identifier a client is enough. QoS 2 publishes keep mochi's handling
// (their PUBREC waits in the map for the PUBREL); the bridge publishes at QoS 1. The broker
// lets every client publish: were an ACL hook added, mochi would drop a refused PUBLISH it
// takes for QoS 0 without the PUBACK the client waits for, so this would need revisiting.
//
// A PUBACK answers the connection its PUBLISH came on. mochi files it in the session's table
// while it writes it and deletes it just after; a client that read it and reconnected at
// once, taking the session over in between, had it copied with the session and resent on
// the new connection, where it answers nothing, or a PUBLISH the client has sent there under
// that identifier (free again since the first PUBACK): paho then reports a message
// delivered that the broker may never get. So the hook drops the PUBACKs from the session a
// connection takes over, as its CONNACK goes out (after the copy, before the resend).
// TestMochiPacketIDCollision holds that moment open.
type packetIDHook struct {
	mqtt.HookBase

	mu sync.Mutex
	// converted holds the clients whose PUBLISH being handled arrived at QoS 1.
	converted map[*mqtt.Client]bool
	// ids holds, per connection, the identifier of its last QoS 1 PUBLISH: the one a PUBACK
	// under identifier 0 answers.
	ids map[*mqtt.Client]uint16
}

func newPacketIDHook() *packetIDHook {
	return &packetIDHook{converted: map[*mqtt.Client]bool{}, ids: map[*mqtt.Client]uint16{}}
}

// ID names the hook.
func (h *packetIDHook) ID() string { return "client-packet-ids" }

// Provides says which events the hook handles.
func (h *packetIDHook) Provides(b byte) bool {
	switch b {
	case mqtt.OnPacketRead, mqtt.OnPublish, mqtt.OnPacketEncode, mqtt.OnDisconnect:
		return true
	}
	return false
}

// OnPacketRead takes a QoS 1 PUBLISH's identifier out of the packet mochi handles.
func (h *packetIDHook) OnPacketRead(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type != packets.Publish || cl.Net.Inline {
		return pk, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Every PUBLISH read resets the mark, so it only ever names the packet being handled.
	delete(h.converted, cl)
	if pk.FixedHeader.Qos != 1 || pk.PacketID == 0 {
		return pk, nil
	}
	h.converted[cl] = true
	h.ids[cl] = pk.PacketID
	pk.FixedHeader.Qos = 0
	pk.PacketID = 0
	return pk, nil
}

// OnPublish gives a converted PUBLISH back its QoS 1 (mochi then acknowledges it under
// identifier 0 and delivers it at QoS 1).
func (h *packetIDHook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.converted[cl] && pk.FixedHeader.Qos == 0 && pk.PacketID == 0 {
		delete(h.converted, cl)
		pk.FixedHeader.Qos = 1
	}
	return pk, nil
}

// OnPacketEncode writes the client's own identifier into the PUBACK mochi filed under 0,
// and drops the PUBACKs of the connection before from a session being taken over.
func (h *packetIDHook) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	switch {
	case pk.FixedHeader.Type == packets.Connack:
		// The connection's packets are not read before its CONNACK and resend are written,
		// so every PUBACK in its table came with the session (mochi counted it out of the
		// broker's inflight total when it left the old connection's table).
		for _, p := range cl.State.Inflight.GetAll(false) {
			if p.FixedHeader.Type == packets.Puback {
				cl.State.Inflight.Delete(p.PacketID)
			}
		}
	case pk.FixedHeader.Type == packets.Puback && pk.PacketID == 0:
		h.mu.Lock()
		defer h.mu.Unlock()
		if id, ok := h.ids[cl]; ok {
			pk.PacketID = id
		}
	}
	return pk
}

// OnDisconnect forgets the connection.
func (h *packetIDHook) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.converted, cl)
	delete(h.ids, cl)
}
