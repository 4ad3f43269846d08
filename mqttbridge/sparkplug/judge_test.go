package sparkplug

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/spbjudge"
)

// scriptedNode is the smallest edge node the specification allows, written with this codec:
// one device, its births, one DDATA, a Rebirth on request and a clean stop.
type scriptedNode struct {
	t           testing.TB
	cli         *paho.Client
	group, edge string
	device      string
	seq         uint64
	bdSeq       int64
	rebirth     chan struct{}
	conn        net.Conn
	printed     int64
}

func (n *scriptedNode) now() uint64 { return uint64(time.Now().UnixMilli()) }

func (n *scriptedNode) publish(topic Topic, p *Payload, qos byte) {
	n.t.Helper()
	if topic.MessageType != NDEATH {
		p.HasSeq, p.Seq = true, n.seq
		n.seq = (n.seq + 1) % 256
	}
	b, err := p.Marshal()
	if err != nil {
		n.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.cli.Publish(ctx, &paho.Publish{Topic: topic.String(), QoS: qos, Payload: b}); err != nil {
		n.t.Fatalf("publish %s: %v", topic, err)
	}
}

func (n *scriptedNode) death() []byte {
	b, err := (&Payload{Timestamp: n.now(), Metrics: []Metric{{Name: "bdSeq", Timestamp: n.now(), Datatype: Int64, Value: n.bdSeq}}}).Marshal()
	if err != nil {
		n.t.Fatal(err)
	}
	return b
}

func (n *scriptedNode) births() {
	ts := n.now()
	n.seq = 0
	n.publish(NodeTopic(n.group, NBIRTH, n.edge), &Payload{Timestamp: ts, Metrics: []Metric{
		{Name: "bdSeq", HasAlias: true, Alias: 100, Timestamp: ts, Datatype: Int64, Value: n.bdSeq},
		{Name: "Node Control/Rebirth", Timestamp: ts, Datatype: Boolean, Value: false},
		{Name: "Node Info/Software", HasAlias: true, Alias: 101, Timestamp: ts, Datatype: String, Value: "scripted 1"},
	}}, 0)
	quality := &PropertySet{Keys: []string{"Quality"}, Values: []PropertyValue{{Type: Int32, Value: int64(192)}}}
	n.publish(DeviceTopic(n.group, DBIRTH, n.edge, n.device), &Payload{Timestamp: ts, Metrics: []Metric{
		{Name: "Status/State", HasAlias: true, Alias: 1, Timestamp: ts, Datatype: String, Value: "ready", Properties: quality},
		{Name: "Counters/PrintedLabels", HasAlias: true, Alias: 2, Timestamp: ts, Datatype: Int64, Value: n.printed},
		{Name: "Command/PrintJob", HasAlias: true, Alias: 3, Timestamp: ts, Datatype: String, Value: ""},
		{Name: "Command/Results", HasAlias: true, Alias: 4, Timestamp: ts, Datatype: DataSetType, Value: &DataSet{
			NumOfColumns: 3, Columns: []string{"id", "state", "attempts"}, Types: []DataType{String, String, Int64},
			Rows: [][]any{{"job-1", "printed", int64(1)}}}},
	}}, 0)
}

func (n *scriptedNode) data() {
	ts := n.now()
	n.printed++
	n.publish(DeviceTopic(n.group, DDATA, n.edge, n.device), &Payload{Timestamp: ts, Metrics: []Metric{
		{HasAlias: true, Alias: 2, Timestamp: ts, Datatype: Int64, Value: n.printed},
	}}, 0)
}

func runScriptedNode(t *testing.T, brokerAddr, group, edge string, bdSeq int64) *scriptedNode {
	n := &scriptedNode{t: t, group: group, edge: edge, device: "line1", bdSeq: bdSeq, rebirth: make(chan struct{}, 4)}
	conn, err := net.Dial("tcp", brokerAddr)
	n.conn = conn
	if err != nil {
		t.Fatal(err)
	}
	n.cli = paho.NewClient(paho.ClientConfig{ClientID: edge + "-spb", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			tp, err := ParseTopic(pr.Packet.Topic)
			if err != nil || tp.MessageType != NCMD {
				return true, nil
			}
			p, err := Unmarshal(pr.Packet.Payload)
			if err != nil {
				t.Errorf("NCMD: %v", err)
				return true, nil
			}
			for _, m := range p.Metrics {
				if m.Name == "Node Control/Rebirth" && m.Value == true {
					n.rebirth <- struct{}{}
				}
			}
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ca, err := n.cli.Connect(ctx, &paho.Connect{ClientID: edge + "-spb", CleanStart: true, KeepAlive: 30,
		WillMessage: &paho.WillMessage{Topic: NodeTopic(group, NDEATH, edge).String(), QoS: 1, Payload: n.death()}})
	if err != nil || ca.ReasonCode != 0 {
		t.Fatalf("connect: %v %+v", err, ca)
	}
	if _, err := n.cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: NodeTopic(group, NCMD, edge).String(), QoS: 1},
		{Topic: DeviceTopic(group, DCMD, edge, "+").String(), QoS: 1},
	}}); err != nil {
		t.Fatal(err)
	}
	n.births()
	n.data()
	return n
}

func (n *scriptedNode) stop() {
	n.publish(NodeTopic(n.group, NDEATH, n.edge), &Payload{Timestamp: n.now(), Metrics: []Metric{{Name: "bdSeq", Timestamp: n.now(), Datatype: Int64, Value: n.bdSeq}}}, 0)
	_ = n.cli.Disconnect(&paho.Disconnect{})
	<-n.cli.Done()
}

// TestJudgeScriptedEdgeNode: an edge node whose every payload this codec writes passes the
// conformance judge's edge-node profile with no failed assertion, through a Rebirth the judge
// asks for and a clean stop. It is the judge's protocol in its smallest form, and what the
// bridge's edge node is judged by.
func TestJudgeScriptedEdgeNode(t *testing.T) {
	j := spbjudge.Start(t, "edge-node", spbjudge.Options{Rebirth: "Plant/edge-a", RebirthAfter: 500 * time.Millisecond})
	obs := j.Observe(t)
	n := runScriptedNode(t, j.Addr, "Plant", "edge-a", 0)
	select {
	case <-n.rebirth:
	case <-time.After(30 * time.Second):
		t.Fatalf("no Rebirth NCMD from the judge in 30 s: %s", j.Log())
	}
	n.births()
	n.data()
	n.stop()
	obs.WaitFor(t, NodeTopic("Plant", NDEATH, "edge-a").String(), 1, 30*time.Second)
	res := j.Stop(t)
	failed, excused := spbjudge.Failed(res, spbjudge.Excused)
	for _, r := range failed {
		t.Error(r)
	}
	for _, r := range excused {
		t.Logf("excused: %s", r)
	}
	t.Logf("judge: %s", spbjudge.Summary(res))
	for _, id := range []string{"tck-id-operational-behavior-data-commands-rebirth-action-2",
		"tck-id-payloads-dataset-column-size", "tck-id-payloads-nbirth-bdseq"} {
		if got := spbjudge.Of(res, id); len(got) == 0 || got[0].Status != "pass" {
			t.Errorf("%s: %v, want pass", id, got)
		}
	}
}

// crash drops the node's connection without a DISCONNECT, as a killed process does: the
// broker sends its Will.
func (n *scriptedNode) crash() {
	_ = n.conn.Close()
	<-n.cli.Done()
}

// TestJudgeScriptedRestarts: the scripted edge node stops cleanly, comes back, is cut off (its
// Will is the NDEATH) and comes back again, its bdSeq one more at each CONNECT as a node that
// keeps it across restarts does; the judge finds the increment at each reconnect and nothing
// to fail. With the bdSeq kept at 0 it fails the increment (checked below), so the test tells
// a node that forgets it.
func TestJudgeScriptedRestarts(t *testing.T) {
	for _, keep := range []bool{true, false} {
		t.Run(map[bool]string{true: "kept", false: "forgotten"}[keep], func(t *testing.T) {
			j := spbjudge.Start(t, "edge-node", spbjudge.Options{})
			obs := j.Observe(t)
			ndeath := NodeTopic("Plant", NDEATH, "edge-a").String()
			bd := func(i int64) int64 {
				if keep {
					return i
				}
				return 0
			}
			n := runScriptedNode(t, j.Addr, "Plant", "edge-a", bd(0))
			n.stop()
			obs.WaitFor(t, ndeath, 1, 30*time.Second)
			n = runScriptedNode(t, j.Addr, "Plant", "edge-a", bd(1))
			n.crash()
			obs.WaitFor(t, ndeath, 2, 30*time.Second)
			n = runScriptedNode(t, j.Addr, "Plant", "edge-a", bd(2))
			n.stop()
			obs.WaitFor(t, ndeath, 3, 30*time.Second)
			res := j.Stop(t)
			inc := spbjudge.Of(res, "tck-id-topics-nbirth-bdseq-increment")
			t.Logf("judge: %s; bdseq-increment: %v", spbjudge.Summary(res), inc)
			failed, excused := spbjudge.Failed(res, spbjudge.AcrossSessions([]uint64{uint64(bd(0)), uint64(bd(1)), uint64(bd(2))}, true))
			for _, r := range excused {
				t.Logf("excused: %s", r)
			}
			if !keep {
				if len(failed) == 0 || len(inc) == 0 || inc[0].Status != "fail" {
					t.Errorf("a bdSeq that does not grow: failed %v, want the increment failed", failed)
				}
				return
			}
			for _, r := range failed {
				t.Error(r)
			}
			if len(inc) != 2 {
				t.Errorf("bdseq-increment: %v, want a verdict for each of 2 reconnects", inc)
			}
			for _, r := range inc {
				if r.Status != "pass" {
					t.Errorf("bdseq-increment: %v", r)
				}
			}
			if rep := spbjudge.Of(res, "tck-id-payloads-nbirth-bdseq-repeat"); len(rep) != 3 || spbjudge.Count(rep)["pass"] != 3 {
				t.Errorf("bdseq-repeat: %v, want a pass for each of 3 sessions", rep)
			}
		})
	}
}
