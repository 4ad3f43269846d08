package mqttbridge

import (
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// resumeHook makes a session resumed on a new connection get every message, in order.
//
// mochi-mqtt (v2.7.9) takes a session over in steps, while other clients' messages keep
// arriving: it copies the old connection's unacknowledged messages to the new one, then
// registers the new connection under the client ID, sends the CONNACK, and only then
// resends the copied messages. A message published meanwhile goes wrong in one of two ways:
//   - routed to the old connection after the copy (found under the client ID until the new
//     one is registered), it is dropped with the old connection: lost;
//   - routed to the new connection before the resend, it is written at once, ahead of the
//     older messages being resent (even ahead of the CONNACK): out of order; and if it was
//     stored before the resend took its list, it is sent twice, the second time without DUP.
//
// The hook holds each message for a client whose session is being taken (from just before
// the takeover until the resend is done, or the new connection has failed) and then: a
// message held for the new connection goes on (after the resend; marked DUP if the resend
// already sent it); one routed to the old connection, and not among the messages copied, is
// given to the new connection (stored in its session, and written when it is up). Only the
// sending of that client's messages waits, for as long as the resend takes.
type resumeHook struct {
	mqtt.HookBase

	mu sync.Mutex
	// gates holds, by client ID, the last connection that took the session.
	gates map[string]*resumeGate
	// dup holds, per connection, the messages already resent whose live copy is still to be
	// written: that copy goes out marked DUP.
	dup map[*mqtt.Client]map[msgKey]bool
}

// resumeGate is one takeover of a session.
type resumeGate struct {
	cl    *mqtt.Client // the connection taking the session
	clean bool         // clean start: the old session's messages are dropped, as asked
	done  chan struct{}
	// Written under resumeHook.mu until done is closed, read only after.
	opened bool
	held   map[msgKey]bool // the session's messages once the resend was done
	resent map[msgKey]bool // the messages the resend wrote
}

// msgKey names one message of a session: its creation stamp, which sessionHook makes
// distinct for each message published, and its topic. It stays the same when the message is
// copied to a new connection or resent.
type msgKey struct {
	created int64
	topic   string
}

func keyOf(pk packets.Packet) msgKey { return msgKey{pk.Created, pk.TopicName} }

func newResumeHook() *resumeHook {
	return &resumeHook{gates: map[string]*resumeGate{}, dup: map[*mqtt.Client]map[msgKey]bool{}}
}

// ID names the hook.
func (h *resumeHook) ID() string { return "session-resume" }

// Provides says which events the hook handles.
func (h *resumeHook) Provides(b byte) bool {
	switch b {
	case mqtt.OnSessionEstablish, mqtt.OnSessionEstablished, mqtt.OnQosPublish, mqtt.OnPacketEncode,
		mqtt.OnDisconnect, mqtt.OnClientExpired:
		return true
	}
	return false
}

// OnSessionEstablish closes the gate for the client ID, before mochi takes the session over.
func (h *resumeHook) OnSessionEstablish(cl *mqtt.Client, pk packets.Packet) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.gates[cl.ID]; old != nil && !old.opened {
		// Another connection with this ID is still being established: mochi may be writing
		// its session's state now, so it is not read; the new gate replaces it, and nothing
		// asks a replaced gate what its session held.
		h.release(old)
	}
	h.gates[cl.ID] = &resumeGate{cl: cl, clean: pk.Connect.Clean, done: make(chan struct{}), resent: map[msgKey]bool{}}
}

// OnSessionEstablished opens the gate: the resend is done.
func (h *resumeHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.gates[cl.ID]; g != nil && g.cl == cl && !g.opened {
		h.open(g)
	}
}

// open records what the session holds and lets the held messages go. h.mu is held.
func (h *resumeHook) open(g *resumeGate) {
	g.held = map[msgKey]bool{}
	for _, pk := range g.cl.State.Inflight.GetAll(false) {
		g.held[keyOf(pk)] = true
	}
	g.opened = true
	close(g.done)
}

// release lets the held messages of a gate another connection replaced go, without reading
// its session. h.mu is held.
func (h *resumeHook) release(g *resumeGate) {
	g.held = map[msgKey]bool{}
	g.opened = true
	close(g.done)
}

// OnQosPublish records the resend's messages, and holds a new message for a session being
// taken over until the gate opens (see resumeHook).
func (h *resumeHook) OnQosPublish(cl *mqtt.Client, pk packets.Packet, _ int64, _ int) {
	if pk.FixedHeader.Type != packets.Publish {
		return
	}
	h.mu.Lock()
	g := h.gates[cl.ID]
	if g == nil || (g.cl == cl && g.opened) {
		h.mu.Unlock()
		return
	}
	if pk.FixedHeader.Dup { // mochi's resend (a new message is never DUP)
		if g.cl == cl && !g.opened {
			g.resent[keyOf(pk)] = true
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	if g.cl == cl {
		h.wait(g)
		h.mu.Lock()
		if g.resent[keyOf(pk)] {
			if h.dup[cl] == nil {
				h.dup[cl] = map[msgKey]bool{}
			}
			h.dup[cl][keyOf(pk)] = true
		}
		h.mu.Unlock()
		return
	}
	if cl.IsTakenOver() {
		h.rescue(cl.ID, g, pk)
	}
}

// rescue gives the session's current connection a message mochi routed to one it replaced,
// unless the session already holds it (copied in the takeover) or was started clean: stored
// in the session under a new identifier, and written if the connection is up (else it goes
// with the session to the next connection). A takeover that starts meanwhile is waited for
// in turn; the message is stored under h.mu, so a takeover that has not begun copies it.
func (h *resumeHook) rescue(clientID string, g *resumeGate, pk packets.Packet) {
	for {
		h.wait(g)
		h.mu.Lock()
		if cur := h.gates[clientID]; cur != g {
			h.mu.Unlock()
			if cur == nil {
				return // the session ended
			}
			g = cur
			continue
		}
		if g.clean || g.held[keyOf(pk)] {
			h.mu.Unlock()
			return
		}
		to := g.cl
		id, err := to.NextPacketID()
		if err != nil {
			h.mu.Unlock()
			return // 65,535 messages unacknowledged: mochi drops it too
		}
		pk.PacketID = uint16(id)
		pk.FixedHeader.Dup = false
		to.State.Inflight.Set(pk)
		g.held[keyOf(pk)] = true
		h.mu.Unlock()
		if !to.Closed() {
			_ = to.WritePacket(pk)
		}
		return
	}
}

// wait returns once g is open or its connection has failed (then mochi calls no hook).
func (h *resumeHook) wait(g *resumeGate) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			if g.cl.Closed() {
				h.mu.Lock()
				if !g.opened {
					h.open(g)
				}
				h.mu.Unlock()
				return
			}
		}
	}
}

// OnPacketEncode marks DUP the live copy of a message the resend already wrote.
func (h *resumeHook) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type != packets.Publish || pk.FixedHeader.Dup {
		return pk
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.dup[cl]; m[keyOf(pk)] {
		pk.FixedHeader.Dup = true
		delete(m, keyOf(pk))
	}
	return pk
}

// OnDisconnect forgets the connection's marks, and the gate when the session ends with it.
func (h *resumeHook) OnDisconnect(cl *mqtt.Client, _ error, expire bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.dup, cl)
	if g := h.gates[cl.ID]; expire && g != nil && g.cl == cl {
		delete(h.gates, cl.ID)
	}
}

// OnClientExpired forgets the gate of a session that expired.
func (h *resumeHook) OnClientExpired(cl *mqtt.Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.gates[cl.ID]; g != nil && g.cl == cl {
		delete(h.gates, cl.ID)
	}
}
