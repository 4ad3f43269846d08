package mqttbridge

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrSessionTakenOver is what Run returns (wrapped, naming the client id) when another
// connection with this bridge's broker.client_id took the broker session: the bridge stopped
// at once and did not reconnect, since two processes with one client id take the session
// from each other without end and both execute the commands.
var ErrSessionTakenOver = errors.New("mqttbridge: another connection took this bridge's broker session")

// reasonSessionTakenOver is the MQTT 5 DISCONNECT reason code a broker sends to the connection
// whose client id a new connection took (MQTT 5 §3.14.2.1).
const reasonSessionTakenOver = 0x8E

// takeoverReasonWait is how long a lost connection waits for the broker's DISCONNECT to be
// reported before it is judged: an outage's reconnection starts that much later.
const takeoverReasonWait = 250 * time.Millisecond

// Some brokers (mosquitto 2.0.11) close the older connection of a client id without a
// DISCONNECT. A takeover by another process that reconnects at once then shows as connections
// closed by the broker again and again, each soon after its CONNACK: quickLosses of them in a
// row, each within quickLoss of its CONNACK and without a DISCONNECT from the broker, are
// taken as a takeover. The bridge reconnects at once after a loss, so two processes with one
// client id reach the count within a second. A message the broker closes the connection over
// costs at most maxPublishTries connections before it is dropped, fewer than quickLosses.
const (
	quickLosses = 10
	quickLoss   = 2 * time.Second
)

// takeoverWatch follows the connections of one bridge and tells a takeover from an outage.
type takeoverWatch struct {
	clientID string

	mu     sync.Mutex
	upAt   time.Time     // the last CONNACK
	reason *byte         // the reason code of the broker's DISCONNECT on the current connection
	said   chan struct{} // closed once the current connection's DISCONNECT is recorded
	quick  int           // connections in a row lost quickly without a DISCONNECT
}

// up records a CONNACK at now.
func (w *takeoverWatch) up(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.upAt, w.reason, w.said = now, nil, make(chan struct{})
}

// awaitReason waits up to d for the broker's DISCONNECT of the current connection to be
// recorded: paho reports it on a goroutine of its own, which may run after the connection is
// reported down.
func (w *takeoverWatch) awaitReason(d time.Duration) {
	w.mu.Lock()
	said := w.said
	w.mu.Unlock()
	if said == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-said:
	case <-t.C:
	}
}

// serverDisconnect records the broker's DISCONNECT on the current connection.
func (w *takeoverWatch) serverDisconnect(reason byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reason = &reason
	if w.said != nil {
		select {
		case <-w.said:
		default:
			close(w.said)
		}
	}
}

// down is the current connection lost at now; it returns an error wrapping
// ErrSessionTakenOver when the session was, or most likely was, taken over.
func (w *takeoverWatch) down(now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.reason != nil && *w.reason == reasonSessionTakenOver:
		return w.saidTakenOver()
	case w.reason != nil || w.upAt.IsZero() || now.Sub(w.upAt) >= quickLoss:
		// The broker said why, or the connection lived: an outage, not a takeover.
		w.quick = 0
		return nil
	}
	w.quick++
	if w.quick < quickLosses {
		return nil
	}
	return fmt.Errorf("%w: the broker closed %d connections in a row, each within %v of accepting it and without saying why: most likely another process is connected with the same client_id %q (brokers such as mosquitto 2.0.11 close the older connection of a client id this way); stopped, not reconnecting: run one bridge per client_id, or a pair with outbox.postgres",
		ErrSessionTakenOver, w.quick, quickLoss, w.clientID)
}

// saidTakenOver is the error of a session the broker says was taken over (DISCONNECT 0x8E).
func (w *takeoverWatch) saidTakenOver() error {
	return fmt.Errorf("%w: the broker says another connection with client_id %q took it (DISCONNECT reason 0x8E); stopped, not reconnecting: run one bridge per client_id, or a pair with outbox.postgres",
		ErrSessionTakenOver, w.clientID)
}
