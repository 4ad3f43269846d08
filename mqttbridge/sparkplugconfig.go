package mqttbridge

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SparkplugConfig is the "sparkplug" block: with it the bridge also runs a Sparkplug B edge
// node (sparkplug.go) on a connection of its own, beside its own topics.
type SparkplugConfig struct {
	// GroupID names the plant or the line: the second level of every Sparkplug topic.
	GroupID string `yaml:"group_id"`
	// EdgeNodeID names the bridge, one per active/standby pair: the fourth level. Its
	// devices are the printers, by their names.
	EdgeNodeID string `yaml:"edge_node_id"`
	// PrimaryHostID, when set, is the Primary Host Application whose STATE the node honours:
	// it is born only while that host says it is online, and leaves when it says offline.
	PrimaryHostID string `yaml:"primary_host_id"`
	// ClientID is the node's MQTT client id (default "<broker.client_id>-spb"): Sparkplug
	// needs a clean session, so the node cannot share the bridge's persistent one.
	ClientID string `yaml:"client_id"`
	// BrokerURL, when set, puts the node on another broker than broker.url (a plant's
	// Sparkplug broker), logging in with broker.username, password_file and tls_config.
	BrokerURL string `yaml:"broker_url"`
	// AllowTriggerWithoutID lets a Command/Trigger without an id trigger once per DCMD
	// message (off by default). Such a trigger that a host writes again is a second trigger:
	// it is for a button a person presses, never for a host that retries.
	AllowTriggerWithoutID bool `yaml:"allow_trigger_without_id"`
}

// The namespace of Sparkplug B topics.
const sparkplugNamespace = "spBv1.0"

// validate fills in the client id and checks each field; clientID is broker.client_id.
func (s *SparkplugConfig) validate(clientID string) error {
	if err := checkSparkplugID(s.GroupID); err != nil {
		return &ConfigError{Field: "sparkplug.group_id", Err: err}
	}
	if err := checkSparkplugID(s.EdgeNodeID); err != nil {
		return &ConfigError{Field: "sparkplug.edge_node_id", Err: err}
	}
	if s.PrimaryHostID != "" {
		if err := checkSparkplugID(s.PrimaryHostID); err != nil {
			return &ConfigError{Field: "sparkplug.primary_host_id", Err: err}
		}
	}
	if s.BrokerURL != "" {
		if _, err := checkBrokerURL("sparkplug.broker_url", s.BrokerURL); err != nil {
			return err
		}
	}
	if s.ClientID == "" {
		s.ClientID = clientID + "-spb"
	}
	switch {
	case s.ClientID == clientID:
		return fieldErr("sparkplug.client_id", "%q is broker.client_id too: the node needs a session of its own, or each connection takes the other's", clip(s.ClientID))
	case len(s.ClientID) > 65535 || !utf8.ValidString(s.ClientID) || hasControl(s.ClientID):
		return fieldErr("sparkplug.client_id", "must be UTF-8 without control characters, at most 65535 bytes")
	}
	return nil
}

// checkSparkplugID applies the specification's rule for a group, edge node, device or host
// id: one topic level, UTF-8, none of + # /.
func checkSparkplugID(s string) error {
	switch {
	case s == "":
		return errors.New("required")
	case strings.ContainsAny(s, "+#/"):
		return fmt.Errorf("%q holds one of + # /, which a Sparkplug id cannot", clip(s))
	case !utf8.ValidString(s) || hasControl(s):
		return errors.New("must be UTF-8 without control characters")
	}
	return nil
}
