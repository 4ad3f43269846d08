package sparkplug

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// StateTopic returns a Primary Host's state topic, spBv1.0/STATE/<hostID>, to which an edge
// node with a configured Primary Host subscribes.
func StateTopic(hostID string) string {
	return Topic{Namespace: Namespace, MessageType: STATE, HostID: hostID}.String()
}

// State is the payload of a Primary Host's STATE message: whether the host is online and
// when it said so, in milliseconds since the epoch. An edge node compares Timestamp with the
// last one it saw to ignore a stale retained message.
type State struct {
	Online    bool   `json:"online"`
	Timestamp uint64 `json:"timestamp"`
}

// ParseState decodes a STATE payload, {"online":bool,"timestamp":ms}; both members are
// required, and a payload that is not that JSON object is an error.
func ParseState(b []byte) (State, error) {
	var raw struct {
		Online    *bool   `json:"online"`
		Timestamp *uint64 `json:"timestamp"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&raw); err != nil {
		return State{}, fmt.Errorf("sparkplug: STATE payload: %w", err)
	}
	if d.More() {
		return State{}, errors.New("sparkplug: STATE payload: data after the JSON object")
	}
	if raw.Online == nil || raw.Timestamp == nil {
		return State{}, errors.New(`sparkplug: STATE payload lacks "online" or "timestamp"`)
	}
	return State{Online: *raw.Online, Timestamp: *raw.Timestamp}, nil
}

// Marshal encodes the state as a Primary Host publishes it.
func (s State) Marshal() []byte {
	b, _ := json.Marshal(s) // a struct of a bool and an integer always encodes
	return b
}
