package mqttbridge

import (
	"errors"
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
	// Its state stays out of the repository, under the user's home.
	root, _ := filepath.Abs(filepath.Join("..", ""))
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	if rel, err := filepath.Rel(root, c.StateDir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("state_dir %s is inside the repository", c.StateDir)
	}
	if !strings.HasPrefix(c.StateDir, home+string(filepath.Separator)) {
		t.Errorf("state_dir %s is not under the home directory %s", c.StateDir, home)
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

// TestStateDirHome: a state_dir of ~/... is under the home directory, wherever the file is;
// ~user is refused rather than taken as a directory named so.
func TestStateDirHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	base := "broker: {url: mqtt://127.0.0.1:1883, client_id: b}\nprinters: [{name: l1, url: http://127.0.0.1:1}]\n"
	for in, want := range map[string]string{
		"~/.local/state/lp": "/home/someone/.local/state/lp",
		"~":                 "/home/someone",
		"state":             "/etc/lp/state",
		"/var/lib/lp":       "/var/lib/lp",
	} {
		c, err := ParseConfig([]byte(base+"state_dir: '"+in+"'\n"), "/etc/lp") // quoted: a bare ~ is YAML's null
		if err != nil || c.StateDir != want {
			t.Errorf("state_dir %s: %v, %v; want %s", in, c, err, want)
		}
	}
	_, err := ParseConfig([]byte(base+"state_dir: ~bob/lp\n"), "/etc/lp")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "state_dir" {
		t.Errorf("~bob/lp: %v, want a state_dir error", err)
	}
}
