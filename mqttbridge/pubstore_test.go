package mqttbridge

import (
	"errors"
	"testing"

	"github.com/eclipse/paho.golang/packets"
)

// TestPubStoreCountsTries: a message's tries are its first sending and each resend on a new
// connection; a try the broker answered (0x91) does not count; at the bound, paho is told to
// leave the message out and the message is marked dropped.
func TestPubStoreCountsTries(t *testing.T) {
	s := newPubStore()
	pkt := func(id uint16) *packets.Publish {
		return &packets.Publish{Topic: "t", QoS: 1, PacketID: id, Properties: &packets.Properties{}}
	}
	m := &message{topic: "t"}
	s.publishing(m)
	if err := s.Put(1, packets.PUBLISH, pkt(1)); err != nil {
		t.Fatal(err)
	}
	s.answered(m) // 0x91: the next attempt takes another identifier
	_ = s.Delete(1)
	if n, _ := s.tries(m); n != 0 {
		t.Fatalf("tries after an answered attempt: %d, want 0", n)
	}
	if err := s.Put(2, packets.PUBLISH, pkt(2)); err != nil {
		t.Fatal(err)
	}
	for want := 2; want <= maxPublishTries; want++ {
		r, err := s.Get(2) // resent on a new connection
		if err != nil {
			t.Fatalf("resend %d: %v", want, err)
		}
		_ = r.Close()
		if n, dropped := s.tries(m); n != want || dropped {
			t.Fatalf("tries %d (dropped %v), want %d", n, dropped, want)
		}
	}
	if _, err := s.Get(2); !errors.Is(err, errDropped) {
		t.Fatalf("resend past the bound: %v, want errDropped", err)
	}
	if n, dropped := s.tries(m); n != maxPublishTries || !dropped {
		t.Errorf("after the bound: tries %d, dropped %v", n, dropped)
	}
	s.answered(m) // a dropped message keeps its count
	if n, _ := s.tries(m); n != maxPublishTries {
		t.Errorf("tries of a dropped message changed to %d", n)
	}
}
