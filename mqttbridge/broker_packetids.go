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
type packetIDHook struct {
	mqtt.HookBase

	mu sync.Mutex
	// converted holds the clients whose PUBLISH being handled arrived at QoS 1.
	converted map[*mqtt.Client]bool
	// ids holds, by client ID, the identifier of the client's last QoS 1 PUBLISH: the one a
	// PUBACK under identifier 0 answers, even when mochi resends that PUBACK to the session's
	// next connection.
	ids map[string]uint16
}

func newPacketIDHook() *packetIDHook {
	return &packetIDHook{converted: map[*mqtt.Client]bool{}, ids: map[string]uint16{}}
}

// ID names the hook.
func (h *packetIDHook) ID() string { return "client-packet-ids" }

// Provides says which events the hook handles.
func (h *packetIDHook) Provides(b byte) bool {
	switch b {
	case mqtt.OnPacketRead, mqtt.OnPublish, mqtt.OnPacketEncode, mqtt.OnDisconnect, mqtt.OnClientExpired:
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
	h.ids[cl.ID] = pk.PacketID
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

// OnPacketEncode writes the client's own identifier into the PUBACK mochi filed under 0.
func (h *packetIDHook) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type != packets.Puback || pk.PacketID != 0 {
		return pk
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := h.ids[cl.ID]; ok {
		pk.PacketID = id
	}
	return pk
}

// OnDisconnect forgets the connection, and the client ID when its session ends with it.
func (h *packetIDHook) OnDisconnect(cl *mqtt.Client, _ error, expire bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.converted, cl)
	if expire {
		delete(h.ids, cl.ID)
	}
}

// OnClientExpired forgets a client whose session expired.
func (h *packetIDHook) OnClientExpired(cl *mqtt.Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.ids, cl.ID)
}
