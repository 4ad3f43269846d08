package mqttbridge

import (
	"testing"
	"unsafe"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session/state"
	"github.com/eclipse/paho.golang/paho/store/memory"
)

// TestRecvSessionReleasesOnlyItsPacket: the packet paho keeps for a command is cut down to
// its identifier once the command is delivered, and a later packet under the same identifier
// (the broker sending a command again on a new connection while the old connection's are
// still being delivered) keeps its content until it is delivered itself.
func TestRecvSessionReleasesOnlyItsPacket(t *testing.T) {
	s := newRecvSession(state.New(memory.New(), memory.New()))
	pubs := make(chan *packets.Publish, 2)
	read := func(payload string) *packets.Publish {
		p := &packets.Publish{PacketID: 7, QoS: 1, Topic: "lp/line1/command/printJob", Payload: []byte(payload),
			Properties: &packets.Properties{ResponseTopic: "mes/replies", CorrelationData: []byte("c")}}
		if err := s.PacketReceived(&packets.ControlPacket{FixedHeader: packets.FixedHeader{Type: packets.PUBLISH}, Content: p}, pubs); err != nil {
			t.Fatal(err)
		}
		return <-pubs
	}
	old := read(`{"id":"a"}`)
	again := read(`{"id":"a"}`) // the same command, read again under the same identifier
	s.release(paho.PublishFromPacketPublish(old))
	if again.Payload == nil || again.Properties == nil || again.Properties.ResponseTopic != "mes/replies" {
		t.Fatalf("the packet read later was cut down when the earlier one was delivered: %+v", again)
	}
	// Delivering it works as paho does it, and cuts it down.
	delivered := paho.PublishFromPacketPublish(again)
	s.release(delivered)
	if again.Payload != nil || again.Topic != "" || again.Properties == nil || again.Properties.ResponseTopic != "" || again.PacketID != 7 || again.QoS != 1 {
		t.Errorf("the packet delivered was not cut down to its identifier and QoS: %+v", again)
	}
	if string(delivered.Payload) != `{"id":"a"}` || delivered.Properties.ResponseTopic != "mes/replies" {
		t.Errorf("the command delivered lost its content: %+v", delivered)
	}
	// paho reads the packet again only to acknowledge it; a packet cut down still converts.
	_ = paho.PublishFromPacketPublish(again)
}

// TestRecvSessionCutPacketsShareProperties: the packets paho keeps until their acknowledgement,
// cut down, share one empty Properties rather than 416 bytes each, and still convert.
func TestRecvSessionCutPacketsShareProperties(t *testing.T) {
	s := newRecvSession(state.New(memory.New(), memory.New()))
	pubs := make(chan *packets.Publish, 1)
	var cut []*packets.Publish
	for id := uint16(1); id <= 3; id++ {
		p := &packets.Publish{PacketID: id, QoS: 1, Topic: "lp/line1/command/printJob", Payload: []byte(`{"id":"a"}`),
			Properties: &packets.Properties{ResponseTopic: "mes/replies", CorrelationData: []byte("c")}}
		if err := s.PacketReceived(&packets.ControlPacket{FixedHeader: packets.FixedHeader{Type: packets.PUBLISH}, Content: p}, pubs); err != nil {
			t.Fatal(err)
		}
		s.release(paho.PublishFromPacketPublish(<-pubs))
		cut = append(cut, p)
	}
	for _, p := range cut[1:] {
		if p.Properties == nil || p.Properties != cut[0].Properties {
			t.Fatalf("packets cut down keep Properties of their own: %p and %p", cut[0].Properties, p.Properties)
		}
	}
	if got := paho.PublishFromPacketPublish(cut[0]); got.PacketID != 1 || got.Properties.ResponseTopic != "" || len(got.Properties.CorrelationData) != 0 {
		t.Errorf("a packet cut down converts to %+v", got)
	}
}

// TestKeepCommandCopies: the command a worker keeps shares no buffer with the packet paho
// read, and names its topic and a Response Topic by one copy for all the commands naming them.
func TestKeepCommandCopies(t *testing.T) {
	in := func() *paho.Publish {
		p := paho.PublishFromPacketPublish(&packets.Publish{PacketID: 3, QoS: 1, Duplicate: true, Topic: string([]byte("lp/line1/command/printJob")),
			Payload: append(make([]byte, 0, 64), `{"id":"a"}`...),
			Properties: &packets.Properties{ResponseTopic: string([]byte("mes/replies")),
				CorrelationData: append(make([]byte, 0, 64), "corr"...)}})
		return p
	}
	a, b := in(), in()
	ka, kb := keepCommand(a), keepCommand(b)
	if &ka.Payload[0] == &a.Payload[0] || cap(ka.Payload) >= cap(a.Payload) {
		t.Errorf("the payload kept is paho's buffer or as large: cap %d, len %d", cap(ka.Payload), len(ka.Payload))
	}
	if &ka.Properties.CorrelationData[0] == &a.Properties.CorrelationData[0] || cap(ka.Properties.CorrelationData) >= cap(a.Properties.CorrelationData) {
		t.Errorf("the Correlation Data kept is paho's buffer or as large")
	}
	if ka.Properties.ResponseTopic != "mes/replies" || !sameString(ka.Properties.ResponseTopic, kb.Properties.ResponseTopic) {
		t.Errorf("two commands naming one Response Topic keep two copies of it")
	}
	if !sameString(ka.Topic, kb.Topic) {
		t.Errorf("two commands on one topic keep two copies of it")
	}
	if !ka.Duplicate() || ka.PacketID != 3 || ka.QoS != 1 || ka.Topic != a.Topic || string(ka.Payload) != `{"id":"a"}` {
		t.Errorf("the copy lost a field: %+v", ka)
	}
	if ack := ackOnly(ka); ack.PacketID != 3 || ack.QoS != 1 || ack.Payload != nil || ack.Properties != nil {
		t.Errorf("ackOnly keeps more than the identifier and QoS: %+v", ack)
	}
}

// sameString says whether a and b share their bytes.
func sameString(a, b string) bool {
	return len(a) > 0 && len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
