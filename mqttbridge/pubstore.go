package mqttbridge

import (
	"errors"
	"io"
	"sync"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho/session/state"
	"github.com/eclipse/paho.golang/paho/store/memory"
)

// maxPublishTries bounds how often one message goes to the broker without an answer before
// the connection ends: a message the broker answers by disconnecting (mosquitto does so for a
// topic name it finds invalid) would otherwise be sent first on every reconnect, by paho's
// session and by the publisher, and take the bridge off the air. After that many tries it is
// dropped, with an error logged.
const maxPublishTries = 3

// errDropped is what the client store answers paho for a message dropped after
// maxPublishTries: paho then leaves it out of the retransmission.
var errDropped = errors.New("mqttbridge: message dropped after too many tries")

// pubStore is the store of paho's session for the PUBLISH packets the bridge sends (the
// client side of the session). It counts each time a message goes to the broker, first by
// the publisher and again by paho's retransmission on a reconnect, and drops a message that
// reached maxPublishTries instead of sending it again.
type pubStore struct {
	*memory.Store
	sess *state.State // set once, before the first connection

	mu      sync.Mutex
	current *message            // the message the publisher is publishing now
	byID    map[uint16]*message // packet identifier -> message, while paho holds it
}

func newPubStore() *pubStore {
	s := &pubStore{Store: memory.New(), byID: map[uint16]*message{}}
	s.sess = state.New(s, memory.New())
	return s
}

// publishing says which message the publisher is about to hand to paho: the PUBLISH that
// paho stores next is that message. The publisher sends one message at a time.
func (s *pubStore) publishing(m *message) {
	s.mu.Lock()
	s.current = m
	s.mu.Unlock()
}

// tries returns how often m went to the broker, and whether it was dropped.
func (s *pubStore) tries(m *message) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m.tries, m.dropped
}

// answered takes back the try of m the broker answered with a PUBACK (0x91, identifier in
// use, is tried again): only tries that end with the connection count.
func (s *pubStore) answered(m *message) {
	s.mu.Lock()
	if !m.dropped && m.tries > 0 {
		m.tries--
	}
	s.mu.Unlock()
}

// Put is paho storing a PUBLISH before it first goes out: one try of the current message.
func (s *pubStore) Put(packetID uint16, packetType byte, w io.WriterTo) error {
	s.mu.Lock()
	if packetType == packets.PUBLISH && s.current != nil {
		s.current.tries++
		s.byID[packetID] = s.current
	}
	s.mu.Unlock()
	return s.Store.Put(packetID, packetType, w)
}

// Get is paho reading a stored PUBLISH to send it again on a new connection: one more try,
// unless the message had its last, in which case it is dropped.
func (s *pubStore) Get(packetID uint16) (io.ReadCloser, error) {
	s.mu.Lock()
	m := s.byID[packetID]
	drop := m != nil && m.tries >= maxPublishTries
	if m != nil && !drop {
		m.tries++
	}
	if drop {
		m.dropped = true
	}
	s.mu.Unlock()
	if drop {
		// paho calls Get holding its session's lock; the drop takes that lock.
		go s.drop(packetID)
		return nil, errDropped
	}
	return s.Store.Get(packetID)
}

// drop ends the message's transaction in paho's session as a refusal (PUBACK 0x80), which
// removes it from the store, frees its identifier and its place in the send quota, and
// answers the Publish call waiting on it.
func (s *pubStore) drop(packetID uint16) {
	cp := packets.NewControlPacket(packets.PUBACK)
	cp.Content = &packets.Puback{PacketID: packetID, ReasonCode: 0x80, Properties: &packets.Properties{}}
	_ = s.sess.PacketReceived(cp, nil)
}

// Delete is paho done with a packet (acknowledged, or dropped).
func (s *pubStore) Delete(packetID uint16) error {
	s.mu.Lock()
	delete(s.byID, packetID)
	s.mu.Unlock()
	return s.Store.Delete(packetID)
}

// Reset is paho's session starting afresh (the broker had none for us).
func (s *pubStore) Reset() error {
	s.mu.Lock()
	s.byID = map[uint16]*message{}
	s.mu.Unlock()
	return s.Store.Reset()
}
