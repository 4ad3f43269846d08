package sparkplug

import (
	"errors"
	"fmt"
	"strings"
)

// Namespace is the first element of every Sparkplug B topic.
const Namespace = "spBv1.0"

// The message types of Sparkplug B topics.
const (
	NBIRTH = "NBIRTH"
	NDEATH = "NDEATH"
	DBIRTH = "DBIRTH"
	DDEATH = "DDEATH"
	NDATA  = "NDATA"
	DDATA  = "DDATA"
	NCMD   = "NCMD"
	DCMD   = "DCMD"
	STATE  = "STATE"
)

// Topic is a parsed Sparkplug B topic: spBv1.0/<group>/<type>/<edge node>[/<device>], or
// spBv1.0/STATE/<host> for a Primary Host's state, where MessageType is STATE and only HostID
// is set.
type Topic struct {
	Namespace   string `json:"namespace"`
	GroupID     string `json:"group_id,omitempty"`
	MessageType string `json:"message_type"`
	EdgeNodeID  string `json:"edge_node_id,omitempty"`
	DeviceID    string `json:"device_id,omitempty"`
	HostID      string `json:"host_id,omitempty"`
}

// ParseTopic parses s, failing with what is wrong: another namespace, an unknown message
// type, a device message without a device id or a node message with one, an empty element.
func ParseTopic(s string) (Topic, error) {
	parts := strings.Split(s, "/")
	if parts[0] != Namespace {
		return Topic{}, fmt.Errorf("sparkplug: topic %q does not start with %s/", s, Namespace)
	}
	if len(parts) == 3 && parts[1] == STATE {
		t := Topic{Namespace: Namespace, MessageType: STATE, HostID: parts[2]}
		return t, t.Validate()
	}
	if len(parts) < 4 || len(parts) > 5 {
		return Topic{}, fmt.Errorf("sparkplug: topic %q has %d elements, not %s/group/type/edge_node[/device]", s, len(parts), Namespace)
	}
	t := Topic{Namespace: Namespace, GroupID: parts[1], MessageType: parts[2], EdgeNodeID: parts[3]}
	if len(parts) == 5 {
		if parts[4] == "" {
			// "…/NBIRTH/node/" would parse as the node's topic and print without its slash.
			return Topic{}, fmt.Errorf("sparkplug: topic %q ends with an empty device id", s)
		}
		t.DeviceID = parts[4]
	}
	if err := t.Validate(); err != nil {
		return Topic{}, fmt.Errorf("sparkplug: topic %q: %w", s, errors.Unwrap(err))
	}
	return t, nil
}

// IsDeviceMessage reports whether a message type is one of a device (DBIRTH, DDEATH, DDATA,
// DCMD), whose topic ends with a device id.
func IsDeviceMessage(messageType string) bool {
	switch messageType {
	case DBIRTH, DDEATH, DDATA, DCMD:
		return true
	}
	return false
}

func isNodeMessage(messageType string) bool {
	switch messageType {
	case NBIRTH, NDEATH, NDATA, NCMD:
		return true
	}
	return false
}

// ValidateID checks a group, edge node, device or host id: non-empty, and without '/', '+'
// or '#', which the specification forbids in them. what names the id in the error (a
// config field, say).
func ValidateID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if i := strings.IndexAny(id, "/+#"); i >= 0 {
		return fmt.Errorf("%s %q holds %q, which Sparkplug forbids in ids", what, id, id[i])
	}
	return nil
}

// Validate checks that t names a topic ParseTopic accepts.
func (t Topic) Validate() error {
	err := t.validate()
	if err != nil {
		return fmt.Errorf("sparkplug: %w", err)
	}
	return nil
}

func (t Topic) validate() error {
	if t.Namespace != Namespace {
		return fmt.Errorf("namespace %q is not %s", t.Namespace, Namespace)
	}
	if t.MessageType == STATE {
		if t.GroupID != "" || t.EdgeNodeID != "" || t.DeviceID != "" {
			return errors.New("a STATE topic has only a host id")
		}
		return ValidateID("host id", t.HostID)
	}
	if t.HostID != "" {
		return fmt.Errorf("a %s topic has no host id", t.MessageType)
	}
	if err := ValidateID("group id", t.GroupID); err != nil {
		return err
	}
	if err := ValidateID("edge node id", t.EdgeNodeID); err != nil {
		return err
	}
	switch {
	case IsDeviceMessage(t.MessageType):
		return ValidateID("device id", t.DeviceID)
	case isNodeMessage(t.MessageType):
		if t.DeviceID != "" {
			return fmt.Errorf("a %s topic has no device id, found %q", t.MessageType, t.DeviceID)
		}
		return nil
	}
	return fmt.Errorf("message type %q is none of Sparkplug B's", t.MessageType)
}

// String returns the topic's text; a Topic without a Namespace gets spBv1.0.
func (t Topic) String() string {
	ns := t.Namespace
	if ns == "" {
		ns = Namespace
	}
	if t.MessageType == STATE {
		return ns + "/" + STATE + "/" + t.HostID
	}
	s := ns + "/" + t.GroupID + "/" + t.MessageType + "/" + t.EdgeNodeID
	if t.DeviceID != "" {
		s += "/" + t.DeviceID
	}
	return s
}

// NodeTopic returns the topic of an edge node's message of type messageType (NBIRTH, NDEATH,
// NDATA, NCMD).
func NodeTopic(groupID, messageType, edgeNodeID string) Topic {
	return Topic{Namespace: Namespace, GroupID: groupID, MessageType: messageType, EdgeNodeID: edgeNodeID}
}

// DeviceTopic returns the topic of a device's message of type messageType (DBIRTH, DDEATH,
// DDATA, DCMD).
func DeviceTopic(groupID, messageType, edgeNodeID, deviceID string) Topic {
	return Topic{Namespace: Namespace, GroupID: groupID, MessageType: messageType, EdgeNodeID: edgeNodeID, DeviceID: deviceID}
}
