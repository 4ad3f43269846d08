package mqttbridge

import (
	"errors"
	"fmt"

	"github.com/eclipse/paho.golang/autopaho"
)

// This file holds how a broker's refusal of the bridge's CONNECT is said: by the name MQTT 5
// gives its reason code, and the config fields that decide it, where paho says only
// "server denied connect (reason: 135)".

// connackReasons names the CONNACK reason codes of MQTT 5 (3.2.2.2) and, where the config
// decides them, what to check.
var connackReasons = map[byte][2]string{
	0x80: {"unspecified error", ""},
	0x81: {"malformed packet", ""},
	0x82: {"protocol error", ""},
	0x83: {"implementation specific error", "see the broker's log"},
	0x84: {"unsupported protocol version", "the bridge speaks MQTT 5; the broker must accept it"},
	0x85: {"client identifier not valid", "check broker.client_id"},
	0x86: {"bad user name or password", "check broker.username and password_file"},
	0x87: {"not authorized", "check broker.username and password_file"},
	0x88: {"server unavailable", ""},
	0x89: {"server busy", ""},
	0x8A: {"banned", "see the broker's configuration"},
	0x8C: {"bad authentication method", "check broker.username and password_file"},
	0x90: {"topic name invalid", "check topic_prefix: the bridge's Will is published under it"},
	0x95: {"packet too large", ""},
	0x97: {"quota exceeded", ""},
	0x99: {"payload format invalid", ""},
	0x9A: {"retain not supported", "the bridge publishes its online state retained"},
	0x9B: {"QoS not supported", "the bridge needs QoS 1"},
	0x9C: {"use another server", "check broker.url"},
	0x9D: {"server moved", "check broker.url"},
	0x9F: {"connection rate exceeded", ""},
}

// connectError words err, autopaho's report of a failed connection attempt: a CONNACK refusal
// by its reason's name and code, the broker's reason string, and what to check.
func connectError(err error) string {
	var ce *autopaho.ConnackError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	name, check := "refused", ""
	if r, ok := connackReasons[ce.ReasonCode]; ok {
		name, check = r[0], r[1]
	}
	msg := fmt.Sprintf("the broker refused the connection: %s (%#x)", name, ce.ReasonCode)
	if ce.Reason != "" {
		msg += fmt.Sprintf(" %q", ce.Reason)
	}
	if check != "" {
		msg += ": " + check
	}
	return msg
}
