package mqttbridge

import (
	"encoding/json"
	"time"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// The states of a Result.
const (
	StateQueued    = "queued"    // committed to the outbox; published before the command is acknowledged
	StateSent      = "sent"      // the printer answered 2xx
	StateRejected  = "rejected"  // the printer answered 4xx: sending again cannot help
	StateUnknown   = "unknown"   // it may or may not have reached the printer; a person decides
	StateExpired   = "expired"   // not sent before its expireAfter
	StateCancelled = "cancelled" // cancelled before it was sent, or dropped after unknown
	StateDuplicate = "duplicate" // the id is already held; nothing was sent
	StateInvalid   = "invalid"   // refused; nothing was sent
	StateDone      = "done"      // abortPrint, cancel or resend succeeded
	StatePruned    = "pruned"    // as a duplicate's current: settled and removed from the outbox, id kept
	StateFailed    = "failed"    // abortPrint, cancel or resend failed
)

// Result is one message on P/result (and on a command's Response Topic): one step of one
// command.
type Result struct {
	// ID is the command's id; empty when the command had no usable one.
	ID string `json:"id"`
	// Command is the command topic's last segment, such as "printJob".
	Command string `json:"command"`
	// State is one of the State constants.
	State string `json:"state"`
	// Current is, for a duplicate, the state of the command already held.
	Current string `json:"current,omitempty"`
	// Attempts is, on the results of cancel and resend and on an unknown one, the number of
	// requests sent for the entry; a resend naming it acts only while the entry still has it.
	Attempts int `json:"attempts,omitempty"`
	// Error says what went wrong, when something did.
	Error string `json:"error,omitempty"`
	// Response is the printer's JSON answer; null when its body was empty or nothing was sent.
	Response json.RawMessage `json:"response"`
	// Time is when the step happened.
	Time time.Time `json:"time"`
}

// resultState maps an outbox state to the result vocabulary: pending is "queued".
func resultState(s outbox.State) string {
	if s == outbox.Pending {
		return StateQueued
	}
	return string(s)
}

// commandOf names the command that made an outbox entry.
func commandOf(e outbox.Entry) string {
	if e.Kind == outbox.KindTrigger {
		return cmdTrigger
	}
	return cmdPrintJob
}

// reported reports whether an entry's new state is a step its command's caller hears of:
// the final states and unknown. Sending, and pending again after a failed attempt, are not.
func reported(s outbox.State) bool {
	switch s {
	case outbox.Sent, outbox.Rejected, outbox.Unknown, outbox.Expired, outbox.Cancelled:
		return true
	}
	return false
}

// entryResult is the result of an outbox entry's new state.
func entryResult(e outbox.Entry) Result {
	r := Result{ID: callerID(e), Command: commandOf(e), State: resultState(e.State), Error: e.Error, Time: e.Updated}
	if e.State == outbox.Unknown {
		r.Attempts = e.Attempts
	}
	if len(e.Response) > 0 {
		r.Response = e.Response
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	return r
}

func (r Result) encode() []byte {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	b, err := json.Marshal(r)
	if err != nil {
		// Only a Response that is not JSON can fail; the SDK hands over JSON or nothing.
		r.Response = nil
		b, _ = json.Marshal(r)
	}
	return b
}
