package mqttbridge

import (
	"bytes"
	"unique"

	"sync"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session/state"
)

// What the bridge keeps of a command it has not acknowledged yet. paho keeps each QoS 1
// PUBLISH it read, whole (topic, payload, Response Topic, Correlation Data), in its
// acknowledgement tracker until the PUBLISH is acknowledged; the bridge acknowledges a command
// only once its first result is with the broker, and the brokers send far more commands than
// the Receive Maximum before that (under a flood of 10,000 commands to a printer that is down,
// paho held up to 9,900 of them). So the packet paho keeps is cut down to its packet
// identifier and QoS, all its acknowledgement needs, as soon as the bridge took what the
// command needs; the command waiting for its turn keeps its own packet, and once it is in the
// outbox only its answer's Response Topic, Correlation Data and id are kept (handle.go), the
// copies keepCommand made.

// recvSession is paho's session state with one addition: it knows the QoS 1 PUBLISH packets
// read from the broker that the bridge has not taken yet (the bridge subscribes at QoS 1), so
// that release can cut them down.
type recvSession struct {
	*state.State

	mu   sync.Mutex
	held map[uint16]*packets.Publish // packet identifier -> the last packet read under it
	// noProps is the empty Properties every packet cut down shares, never written: paho's
	// Properties are 416 bytes, more than the rest of what a command waiting for its
	// acknowledgement keeps of paho's packet, and paho's list of acknowledgements keeps packets
	// it acknowledged until its array moves.
	noProps *packets.Properties
}

func newRecvSession(s *state.State) *recvSession {
	return &recvSession{State: s, held: map[uint16]*packets.Publish{}, noProps: &packets.Properties{}}
}

// PacketReceived notes a PUBLISH read from the broker before paho's session passes it on.
func (s *recvSession) PacketReceived(cp *packets.ControlPacket, pubs chan<- *packets.Publish) error {
	if p, ok := cp.Content.(*packets.Publish); ok && p.QoS == 1 {
		s.mu.Lock()
		s.held[p.PacketID] = p
		s.mu.Unlock()
	}
	return s.State.PacketReceived(cp, pubs)
}

// release cuts the packet paho keeps for pb down to what its acknowledgement needs. It is
// called on paho's delivery goroutine, after the handlers took their copy of the packet's
// fields (paho.PublishFromPacketPublish) and before paho reads the packet again, which it
// does only for its identifier and QoS. The packet noted under pb's identifier is pb's only
// if it holds the same payload: a later one under the same identifier (the broker sending the
// command again on a new connection while the old one's are still being delivered) is cut
// down when it is delivered itself, never before. A command with an empty payload keeps its
// packet, which is small.
func (s *recvSession) release(pb *paho.Publish) {
	if pb.QoS != 1 || len(pb.Payload) == 0 {
		return
	}
	s.mu.Lock()
	p := s.held[pb.PacketID]
	if p == nil || len(p.Payload) == 0 || &p.Payload[0] != &pb.Payload[0] {
		s.mu.Unlock()
		return
	}
	delete(s.held, pb.PacketID)
	s.mu.Unlock()
	p.Topic, p.Payload, p.Properties = "", nil, s.noProps
}

// keepCommand is the copy of pb a command keeps while it waits for its turn, the buffers paho
// read it into left behind: paho reads a 1 KiB Correlation Data or Response Topic into a buffer
// of 2.5 KiB, and a payload into one up to twice its size. A Response Topic is kept once for
// all the commands that name it (most callers name one topic for all their answers), and so is
// the command's topic (a printer's, one per kind of command).
func keepCommand(pb *paho.Publish) *paho.Publish {
	c := *pb
	c.Topic = unique.Make(pb.Topic).Value()
	c.Payload = bytes.Clone(pb.Payload)
	if pb.Properties != nil {
		props := *pb.Properties
		if props.ResponseTopic != "" {
			props.ResponseTopic = unique.Make(props.ResponseTopic).Value()
		}
		props.CorrelationData = bytes.Clone(props.CorrelationData)
		c.Properties = &props
	}
	return &c
}

// ackOnly is what acknowledging pb needs: its packet identifier and QoS (paho's Ack reads
// nothing else), so that a command waiting for its first result to reach the broker does not
// keep its payload and properties.
func ackOnly(pb *paho.Publish) *paho.Publish {
	return &paho.Publish{PacketID: pb.PacketID, QoS: pb.QoS}
}
