package mqttbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleConfig: the configuration in examples/mqtt parses, and the ACL beside it gives
// commands to the MES user alone.
func TestExampleConfig(t *testing.T) {
	dir := filepath.Join("..", "examples", "mqtt")
	c, err := LoadConfig(filepath.Join(dir, "bridge.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Broker.URL != "mqtt://127.0.0.1:1883" || len(c.Printers) != 2 || c.TopicPrefix != "labelprinter" {
		t.Errorf("example config: %+v", c)
	}
	acl, err := os.ReadFile(filepath.Join(dir, "labelprinter.acl"))
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, line := range strings.Split(string(acl), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "user":
			user = f[1]
		case len(f) == 3 && f[0] == "pattern":
			if strings.Contains(f[2], "/cmd") && f[1] != "read" {
				t.Errorf("a pattern lets every user write commands: %q", line)
			}
		case len(f) == 3 && f[0] == "topic" && strings.Contains(f[2], "/cmd") && f[1] != "read" && user != "mes":
			t.Errorf("user %q may write commands: %q", user, line)
		}
	}
}
