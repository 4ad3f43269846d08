package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

func TestSparkplugDecode(t *testing.T) {
	ctx := context.Background()
	p := &sparkplug.Payload{Timestamp: 1700000000000, HasSeq: true, Seq: 3, Metrics: []sparkplug.Metric{
		{Name: "Status/State", Alias: 1, HasAlias: true, Timestamp: 1700000000000, Datatype: sparkplug.String, Value: "ready"},
		{Name: "Counters/PrintedLabels", Datatype: sparkplug.Int64, Value: int64(0)},
	}}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "timestamp": 1700000000000,
  "seq": 3,
  "metrics": [
    {
      "name": "Status/State",
      "alias": 1,
      "timestamp": 1700000000000,
      "datatype": "String",
      "value": "ready"
    },
    {
      "name": "Counters/PrintedLabels",
      "datatype": "Int64",
      "value": 0
    }
  ]
}
`
	if r := cli(t, ctx, nil, string(b), "sparkplug", "decode").ok(t); r.stdout != want {
		t.Errorf("from stdin:\n%s\nwant:\n%s", r.stdout, want)
	}
	file := filepath.Join(t.TempDir(), "ddata.bin")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, ctx, nil, "", "-o", "json", "sparkplug", "decode", file).ok(t); r.stdout != want {
		t.Errorf("from a file:\n%s", r.stdout)
	}
	r := cli(t, ctx, nil, string(b), "sparkplug", "decode", "--topic", "spBv1.0/Line1/DDATA/bridge-a/line1", "-").ok(t)
	if !strings.HasPrefix(r.stdout, `{
  "topic": {
    "namespace": "spBv1.0",
    "group_id": "Line1",
    "message_type": "DDATA",
    "edge_node_id": "bridge-a",
    "device_id": "line1"
  },
  "payload": {
    "timestamp": 1700000000000,`) {
		t.Errorf("with --topic:\n%s", r.stdout)
	}
	r = cli(t, ctx, nil, `{"online":true,"timestamp":5}`, "sparkplug", "decode", "--topic", "spBv1.0/STATE/scada").ok(t)
	if r.stdout != "{\n  \"topic\": {\n    \"namespace\": \"spBv1.0\",\n    \"message_type\": \"STATE\",\n    \"host_id\": \"scada\"\n  },\n  \"state\": {\n    \"online\": true,\n    \"timestamp\": 5\n  }\n}\n" {
		t.Errorf("STATE:\n%s", r.stdout)
	}

	for _, c := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{string(b), []string{"--topic", "spBv1.0/Line1/DDATA/bridge-a"}, 2, `labelctl: --topic: sparkplug: topic "spBv1.0/Line1/DDATA/bridge-a": device id is empty`},
		{"\x12\x07\x0a\x01m\x20\x0c\x50\x01", nil, 1, `labelctl: sparkplug: metric 0 ("m"): String value is in int_value, not string_value`},
		{"\x12\x09", nil, 1, "labelctl: sparkplug: payload: field 2: unexpected EOF"},
		{"", nil, 1, "labelctl: stdin is empty, not a Sparkplug B payload"},
		{"", []string{filepath.Join(t.TempDir(), "missing")}, 1, "no such file"},
		{"offline", []string{"--topic", "spBv1.0/STATE/h"}, 1, "labelctl: sparkplug: STATE payload: invalid character"},
		{"", []string{"a", "b"}, 2, "accepts at most 1 arg"},
	} {
		r := cli(t, ctx, nil, c.stdin, append([]string{"sparkplug", "decode"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%q %q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.stdin, c.args, r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
}
