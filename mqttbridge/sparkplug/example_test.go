package sparkplug_test

import (
	"fmt"

	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

// An edge node's DDATA with one counter, by alias, and how a host reads it back.
func ExamplePayload_Marshal() {
	p := &sparkplug.Payload{Timestamp: 1700000000000, HasSeq: true, Seq: 7, Metrics: []sparkplug.Metric{
		{HasAlias: true, Alias: 12, Timestamp: 1700000000000, Datatype: sparkplug.Int64, Value: int64(42)},
	}}
	b, err := p.Marshal()
	if err != nil {
		fmt.Println(err)
		return
	}
	q, err := sparkplug.Unmarshal(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := q.Metrics[0]
	fmt.Printf("%d bytes, seq %d, alias %d: %s %v\n", len(b), q.Seq, m.Alias, m.Datatype, m.Value)
	// Output: 24 bytes, seq 7, alias 12: Int64 42
}

// A host's command without a datatype takes the one the birth declared.
func ExampleMetric_Resolve() {
	q, err := sparkplug.Unmarshal([]byte{0x12, 7, 0x0a, 1, 'm', 0x7a, 2, '{', '}'})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := q.Metrics[0]
	fmt.Println(m.Datatype)
	err = m.Resolve(sparkplug.String)
	fmt.Println(m.Datatype, m.Value, err)
	fmt.Println(m.Resolve(sparkplug.Int64))
	// Output:
	// Unknown
	// String {} <nil>
	// sparkplug: metric "m" is String, not Int64
}

func ExampleParseTopic() {
	t, err := sparkplug.ParseTopic("spBv1.0/Line1/DCMD/bridge-a/printer-1")
	fmt.Println(t.GroupID, t.MessageType, t.EdgeNodeID, t.DeviceID, err)
	_, err = sparkplug.ParseTopic("spBv1.0/Line1/DCMD/bridge-a")
	fmt.Println(err)
	// Output:
	// Line1 DCMD bridge-a printer-1 <nil>
	// sparkplug: topic "spBv1.0/Line1/DCMD/bridge-a": device id is empty
}

// An edge node with a Primary Host subscribes to its STATE topic and births only once the
// host says it is online, later than the last state it saw.
func ExampleParseState() {
	fmt.Println(sparkplug.StateTopic("scada"))
	s, err := sparkplug.ParseState([]byte(`{"online":true,"timestamp":1700000000000}`))
	fmt.Println(s.Online, s.Timestamp, err)
	_, err = sparkplug.ParseState([]byte(`OFFLINE`))
	fmt.Println(err != nil)
	// Output:
	// spBv1.0/STATE/scada
	// true 1700000000000 <nil>
	// true
}
