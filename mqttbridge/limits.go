package mqttbridge

import "github.com/eclipse/paho.golang/paho"

// Defaults of LimitsConfig.
const (
	DefaultMaxPacketSize       = 1 << 20
	DefaultReceiveMaximum      = 100
	DefaultResponseTopicBytes  = 1024
	DefaultCorrelationBytes    = 1024
	DefaultUserPropertiesBytes = 4096
	DefaultIDBytes             = maxIDLen
	// minMaxPacketSize leaves room for a command's topic, properties and a small job.
	minMaxPacketSize = 4096
)

// LimitsConfig bounds what one command may hold, and so what the bridge keeps for the
// commands it holds: the broker sends at most ReceiveMaximum commands the bridge has not
// acknowledged, none larger than MaxPacketSize, and the Response Topic and Correlation Data
// of a command waiting in the outbox are kept until its final result. A command over one of
// the caps is answered invalid, naming the cap. Zero values take the defaults.
type LimitsConfig struct {
	// MaxPacketSize is the Maximum Packet Size the bridge's CONNECT asks for, in bytes (default
	// 1 MiB): the broker does not send a larger packet (mosquitto drops it).
	MaxPacketSize uint32 `yaml:"max_packet_size"`
	// ReceiveMaximum is the Receive Maximum of the bridge's CONNECT (default 100): how many
	// commands the broker sends before the bridge acknowledged them. The rest wait with the
	// broker, in order; none is dropped.
	ReceiveMaximum uint16 `yaml:"receive_maximum"`
	// ResponseTopicBytes caps a command's MQTT 5 Response Topic (default 1 KiB).
	ResponseTopicBytes int `yaml:"response_topic_bytes"`
	// CorrelationDataBytes caps a command's Correlation Data (default 1 KiB).
	CorrelationDataBytes int `yaml:"correlation_data_bytes"`
	// UserPropertiesBytes caps a command's user properties, names and values together
	// (default 4 KiB).
	UserPropertiesBytes int `yaml:"user_properties_bytes"`
	// IDBytes caps a command's id (default and most 256 bytes, the outbox's bound on its keys).
	IDBytes int `yaml:"id_bytes"`
}

// validate fills in the defaults and checks each cap.
func (l *LimitsConfig) validate() error {
	switch {
	case l.MaxPacketSize == 0:
		l.MaxPacketSize = DefaultMaxPacketSize
	case l.MaxPacketSize < minMaxPacketSize:
		return fieldErr("limits.max_packet_size", "%d is below %d bytes, too small for a command with a job", l.MaxPacketSize, minMaxPacketSize)
	}
	if l.ReceiveMaximum == 0 {
		l.ReceiveMaximum = DefaultReceiveMaximum
	}
	for _, c := range []struct {
		field string
		v     *int
		def   int
		most  int
	}{
		{"limits.response_topic_bytes", &l.ResponseTopicBytes, DefaultResponseTopicBytes, maxTopicLen},
		{"limits.correlation_data_bytes", &l.CorrelationDataBytes, DefaultCorrelationBytes, maxTopicLen},
		{"limits.user_properties_bytes", &l.UserPropertiesBytes, DefaultUserPropertiesBytes, int(l.MaxPacketSize)},
		{"limits.id_bytes", &l.IDBytes, DefaultIDBytes, maxIDLen},
	} {
		switch {
		case *c.v == 0:
			*c.v = c.def
		case *c.v < 0:
			return fieldErr(c.field, "%d is negative", *c.v)
		case *c.v > c.most:
			return fieldErr(c.field, "%d is above the most, %d bytes", *c.v, c.most)
		}
	}
	return nil
}

// checkCaps says which cap of l command pb is over, or returns nil. replyOK is false when the
// cap is on the Response Topic or Correlation Data, which the answer then does not use.
func (l *LimitsConfig) checkCaps(pb *paho.Publish) (replyOK bool, err error) {
	props := pb.Properties
	if props == nil {
		return true, nil
	}
	if n := len(props.ResponseTopic); n > l.ResponseTopicBytes {
		return false, invalidf("the Response Topic is %d bytes, over the cap of %d (limits.response_topic_bytes); nothing was done", n, l.ResponseTopicBytes)
	}
	if n := len(props.CorrelationData); n > l.CorrelationDataBytes {
		return false, invalidf("the Correlation Data is %d bytes, over the cap of %d (limits.correlation_data_bytes); nothing was done", n, l.CorrelationDataBytes)
	}
	n := 0
	for _, u := range props.User {
		n += len(u.Key) + len(u.Value)
	}
	if n > l.UserPropertiesBytes {
		return true, invalidf("the user properties are %d bytes, over the cap of %d (limits.user_properties_bytes); nothing was done", n, l.UserPropertiesBytes)
	}
	return true, nil
}

// checkIDCap refuses an id over the configured cap.
func (l *LimitsConfig) checkIDCap(id string) error {
	if len(id) > l.IDBytes {
		return invalidf(`"id" is %d bytes, over the cap of %d (limits.id_bytes)`, len(id), l.IDBytes)
	}
	return nil
}

// connectLimits puts the caps the broker must keep into the CONNECT.
func (l *LimitsConfig) connectLimits(cp *paho.Connect) {
	if cp.Properties == nil {
		cp.Properties = &paho.ConnectProperties{}
	}
	size, recv := l.MaxPacketSize, l.ReceiveMaximum
	cp.Properties.MaximumPacketSize = &size
	cp.Properties.ReceiveMaximum = &recv
}
