package mqttbridge

import (
	"errors"
	"strings"
	"testing"
)

// TestSparkplugConfig: the block is off unless present, its client id defaults to the
// bridge's with "-spb", and each bad field is a ConfigError naming it.
func TestSparkplugConfig(t *testing.T) {
	base := "broker: {url: \"mqtt://b:1883\", client_id: line3}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]\n"
	c, err := ParseConfig([]byte(base), t.TempDir())
	if err != nil || c.Sparkplug != nil {
		t.Fatalf("without the block: %+v, %v; want no edge node", c, err)
	}
	c, err = ParseConfig([]byte(base+"sparkplug: {group_id: plant1, edge_node_id: bridge1}\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Sparkplug; s.ClientID != "line3-spb" || s.PrimaryHostID != "" || s.AllowTriggerWithoutID {
		t.Errorf("defaults: %+v", s)
	}
	cases := []struct{ block, field string }{
		{"{edge_node_id: e}", "sparkplug.group_id"},
		{"{group_id: a/b, edge_node_id: e}", "sparkplug.group_id"},
		{"{group_id: g}", "sparkplug.edge_node_id"},
		{"{group_id: g, edge_node_id: \"e+\"}", "sparkplug.edge_node_id"},
		{"{group_id: g, edge_node_id: \"e#\"}", "sparkplug.edge_node_id"},
		{"{group_id: g, edge_node_id: e, primary_host_id: \"h/1\"}", "sparkplug.primary_host_id"},
		{"{group_id: g, edge_node_id: e, client_id: line3}", "sparkplug.client_id"},
		{"{group_id: g, edge_node_id: e, client_id: \"a\\tb\"}", "sparkplug.client_id"},
		{"{group_id: g, edge_node_id: e, broker_url: \"http://b\"}", "sparkplug.broker_url"},
		{"{group_id: g, edge_node_id: e, broker_url: \"mqtt://u:p@b\"}", "sparkplug.broker_url"},
	}
	for _, tc := range cases {
		_, err := ParseConfig([]byte(base+"sparkplug: "+tc.block+"\n"), t.TempDir())
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: %v, want a ConfigError for %s", tc.block, err, tc.field)
		}
	}
	if _, err := ParseConfig([]byte(base+"sparkplug: {group_id: g, edge_node_id: e, primary_host: h}\n"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "primary_host") {
		t.Errorf("a misspelt field: %v, want an error naming it", err)
	}
}
