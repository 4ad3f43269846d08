package mqttbridge

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pw", "s3cret\n")
	c, err := ParseConfig([]byte(`
broker: {url: "mqtt://127.0.0.1:1883", client_id: line3, username: bridge, password_file: pw}
state_dir: state
printers:
  - {name: line1, url: "http://192.168.1.50/", printer: line1}
  - {name: single, url: "http://192.168.1.51"}
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.TopicPrefix != "labelprinter" || c.PollInterval != time.Second || c.Broker.SessionExpiry != 24*time.Hour {
		t.Errorf("defaults: %+v", c)
	}
	if c.StateDir != dir+"/state" || c.Broker.PasswordFile != dir+"/pw" || c.Printers[0].URL != "http://192.168.1.50" {
		t.Errorf("relative paths and URLs: %+v", c)
	}
	pw, err := readPassword(c.Broker.PasswordFile)
	if err != nil || string(pw) != "s3cret" {
		t.Errorf("password %q, %v: want it less one trailing newline", pw, err)
	}
	writeFile(t, dir, "pw2", "two\n\n")
	if pw, _ := readPassword(dir + "/pw2"); string(pw) != "two\n" {
		t.Errorf("password %q: only one trailing newline is dropped", pw)
	}
}

// TestConfigErrorsNameTheField: every bad setting is a *ConfigError naming its field, and no
// error quotes the password.
func TestConfigErrorsNameTheField(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pw", "hunter2-secret\n")
	writeFile(t, dir, "empty", "\n")
	base := func(extra string) string {
		return "broker: {url: \"mqtt://b:1883\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]\n" + extra
	}
	cases := []struct{ yaml, field string }{
		{"broker: {url: \"http://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.url"},
		{"broker: {url: \"mqtt://u:p@b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.url"},
		{"broker: {url: \"mqtt://b\"}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.client_id"},
		{"broker: {url: \"mqtt://b\", client_id: c, password_file: missing}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.password_file"},
		{"broker: {url: \"mqtt://b\", client_id: c, password_file: empty}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.password_file"},
		{"broker: {url: \"mqtt://b\", client_id: c, tls_config: {ca_file: ca.pem}}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.tls_config"},
		{"broker: {url: \"mqtts://b\", client_id: c, tls_config: {ca_file: nope.pem}}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.tls_config"},
		{"broker: {url: \"mqtt://b\", client_id: c, session_expiry: 10ms}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]", "broker.session_expiry"},
		{base("topic_prefix: a/+/b"), "topic_prefix"},
		{base("topic_prefix: a//b"), "topic_prefix"},
		{base("topic_prefix: $SYS"), "topic_prefix"},
		{base("poll_interval: 1ms"), "poll_interval"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nprinters: [{name: p, url: \"http://x\"}]", "state_dir"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s", "printers"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: \"a/b\", url: \"http://x\"}]", "printers[0].name"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: \"a#\", url: \"http://x\"}]", "printers[0].name"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: bridge, url: \"http://x\"}]", "printers[0].name"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}, {name: p, url: \"http://y\"}]", "printers[1].name"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"ftp://x\"}]", "printers[0].url"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p}]", "printers[0].url"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\", printer: \"..\"}]", "printers[0].printer"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\", printer: a}, {name: q, url: \"http://x\", printer: a}]", "printers[1]"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\", http_client_config: {bearer_token: t, basic_auth: {username: u}}}]", "printers[0].http_client_config"},
		{"broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}, {name: q, url: \"http://x\", printer: q, http_client_config: {bearer_token: t}}]", "printers[1].http_client_config"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.yaml), dir)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%q: error %v, want a ConfigError for %s", c.yaml, err, c.field)
			continue
		}
		if !strings.Contains(err.Error(), c.field+":") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: message %q must name %s and quote no secret", c.yaml, err, c.field)
		}
	}
	if _, err := ParseConfig([]byte(base("polll_interval: 1s")), dir); err == nil || !strings.Contains(err.Error(), "polll_interval") {
		t.Errorf("a misspelt field: %v, want an error naming it", err)
	}
}

func TestStateFile(t *testing.T) {
	a, b := StateFile("d", "http://10.0.0.1:8631"), StateFile("d", "https://10.0.0.1:8631")
	if a == b || !strings.HasPrefix(a, "d/10.0.0.1_8631-") || StateFile("d", "http://10.0.0.1:8631/") != a {
		t.Errorf("state files %s, %s", a, b)
	}
}
