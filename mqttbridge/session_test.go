package mqttbridge

import (
	"fmt"
	"strings"
	"testing"
)

// TestCommandsWhileStopped: commands published while the bridge is stopped wait in its
// persistent session and go out, in order, once it is back; a clean stop publishes offline.
func TestCommandsWhileStopped(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		r := startBridge(t, cfg)
		w.waitOnline(1)
		r.stop(t)
		if last := w.last(onlineTopic(prefix)); last == nil || onlineStateOf(last) != BridgeOffline {
			t.Fatalf("after a clean stop, online is %v, want offline", last)
		}
		s := newSender(t, bk.URL())
		var ids []string
		for i := range 10 {
			id := fmt.Sprintf("w%02d", i)
			ids = append(ids, id)
			s.send(cmdTopic("line1", "printJob"), printJobCmd(id))
		}
		// The embedded broker hands a message to subscribers after acknowledging it to the
		// publisher; wait until it has, so the bridge's reconnect does not race it.
		eventually(t, "the commands with a live subscriber", func() bool {
			n := 0
			for _, id := range ids {
				w.mu.Lock()
				for _, p := range w.got {
					if p.Topic == cmdTopic("line1", "printJob") && strings.Contains(string(p.Payload), id) {
						n++
						break
					}
				}
				w.mu.Unlock()
			}
			return n == len(ids)
		})
		startBridge(t, cfg)
		for _, id := range ids {
			w.waitStates(resultTopic("line1"), id, StateQueued, StateSent)
		}
		if got := pl.arrivals("line1"); !equal(got, ids) {
			t.Errorf("arrival order %v, want %v", got, ids)
		}
	})
}
