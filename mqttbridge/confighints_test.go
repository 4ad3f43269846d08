package mqttbridge

import (
	"strings"
	"testing"
)

// TestConfigSaysWhatToWrite: the mistakes a newcomer makes in the config file are each said
// with what to write instead. Before: "1ns is below the 10ms floor", "not a URL", "scheme must
// be mqtt, ...", and the YAML library's "found character that cannot start any token".
func TestConfigSaysWhatToWrite(t *testing.T) {
	dir := t.TempDir()
	const printers = "printers:\n  - name: p\n    url: http://x\n"
	for _, c := range []struct{ yaml, want string }{
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\npoll_interval: 1\n" + printers,
			"config: poll_interval: 1 has no unit: write 1s (or 500ms, 2m, 1h)"},
		{"broker: {url: \"mqtt://b\", client_id: c, session_expiry: 3600}\nstate_dir: s\n" + printers,
			"config: broker.session_expiry: 3600 has no unit: write 3600s"},
		{"broker: {url: \"mqtt://b\", client_id: c}\noutbox:\n  lease_ttl: 5\n  postgres: {dsn: \"postgres://lp@db1/plant\"}\n" + printers,
			"config: outbox.lease_ttl: 5 has no unit: write 5s"},
		{"broker: {url: \"127.0.0.1:1883\", client_id: c}\nstate_dir: s\n" + printers,
			"config: broker.url: 127.0.0.1:1883 has no scheme: write mqtt://127.0.0.1:1883"},
		{"broker: {url: \"localhost:1883\", client_id: c}\nstate_dir: s\n" + printers,
			"config: broker.url: localhost:1883 has no scheme: write mqtt://localhost:1883"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters:\n  - name: p\n    url: 192.168.1.50\n",
			"config: printers[0].url: 192.168.1.50 has no scheme: write http://192.168.1.50"},
		{"broker:\n\turl: mqtt://b\n  client_id: c\nstate_dir: s\n" + printers,
			"config: line 2: a tab; YAML indents with spaces"},
	} {
		_, err := ParseConfig([]byte(c.yaml), dir)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.yaml, err, c.want)
		}
	}
	// A tab inside a quoted value is the value's, and a duration with its unit is a duration.
	if _, err := ParseConfig([]byte("broker: {url: \"mqtt://b\", client_id: \"c\"}\nstate_dir: \"s\tt\"\npoll_interval: 2s\n"+printers), dir); err != nil {
		t.Errorf("a tab in a quoted value, poll_interval 2s: %v", err)
	}
}
