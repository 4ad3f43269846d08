package sparkplug

import (
	"strings"
	"testing"
)

func TestParseTopic(t *testing.T) {
	for _, c := range []struct {
		s    string
		want Topic
	}{
		{"spBv1.0/Line1/NBIRTH/bridge-a", Topic{Namespace, "Line1", NBIRTH, "bridge-a", "", ""}},
		{"spBv1.0/Line1/DCMD/bridge-a/printer 1", Topic{Namespace, "Line1", DCMD, "bridge-a", "printer 1", ""}},
		{"spBv1.0/STATE/scada", Topic{Namespace: Namespace, MessageType: STATE, HostID: "scada"}},
	} {
		got, err := ParseTopic(c.s)
		if err != nil || got != c.want {
			t.Errorf("%q: got %+v, %v; want %+v", c.s, got, err, c.want)
		}
		if got.String() != c.s {
			t.Errorf("%q: String gives %q", c.s, got.String())
		}
	}
	for _, c := range []struct{ s, want string }{
		{"spAv1.0/g/NBIRTH/e", "does not start with spBv1.0/"},
		{"spBv1.0/g/NBIRTH", "has 3 elements"},
		{"spBv1.0/g/DBIRTH/e/d/x", "has 6 elements"},
		{"spBv1.0/g/DBIRTH/e", `device id is empty`},
		{"spBv1.0/g/NDATA/e/d", `a NDATA topic has no device id, found "d"`},
		{"spBv1.0/g/NFOO/e", `message type "NFOO" is none of Sparkplug B's`},
		{"spBv1.0//NBIRTH/e", "group id is empty"},
		{"spBv1.0/g/NCMD/+", `edge node id "+" holds '+'`},
		{"spBv1.0/STATE/", "host id is empty"},
		{"spBv1.0/STATE/#", `host id "#" holds '#'`},
	} {
		_, err := ParseTopic(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "sparkplug: ") {
			t.Errorf("%q: got %v, want an error with %q", c.s, err, c.want)
		}
	}
	if s := DeviceTopic("g", DDATA, "e", "d").String(); s != "spBv1.0/g/DDATA/e/d" {
		t.Error(s)
	}
	if s := NodeTopic("g", NDEATH, "e").String(); s != "spBv1.0/g/NDEATH/e" {
		t.Error(s)
	}
	if s := StateTopic("h"); s != "spBv1.0/STATE/h" {
		t.Error(s)
	}
}

func TestState(t *testing.T) {
	s, err := ParseState([]byte(`{"online":true,"timestamp":1700000000000}`))
	if err != nil || s != (State{Online: true, Timestamp: 1700000000000}) {
		t.Fatalf("got %+v, %v", s, err)
	}
	if got, err := ParseState(s.Marshal()); err != nil || got != s {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"online":true}`, `lacks "online" or "timestamp"`},
		{`{"timestamp":1}`, `lacks "online" or "timestamp"`},
		{`{"online":"yes","timestamp":1}`, "cannot unmarshal string"},
		{`{"online":false,"timestamp":-1}`, "cannot unmarshal number -1"},
		{`{"online":false,"timestamp":1} {}`, "data after the JSON object"},
		{`OFFLINE`, "invalid character"},
	} {
		if _, err := ParseState([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.in, err, c.want)
		}
	}
}
