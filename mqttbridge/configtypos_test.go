package mqttbridge

import (
	"errors"
	"strings"
	"testing"
)

// TestConfigTypos: a misspelt field says the field as written, its line, its section and the
// closest field there, in one line, instead of the decoder's Go type.
func TestConfigTypos(t *testing.T) {
	const head = "broker:\n  url: mqtt://127.0.0.1:1883\n  client_id: b\nstate_dir: /tmp/s\n"
	for _, c := range []struct{ yaml, want string }{
		{head + "printers:\n  - name: l1\n    url: http://127.0.0.1:1\n    printr: line1\n",
			`config: line 8: unknown field "printr" in printers[]; did you mean "printer"?`},
		{head + "topic_prefx: plant\nprinters: [{name: l1, url: http://127.0.0.1:1}]\n",
			`config: line 5: unknown field "topic_prefx"; did you mean "topic_prefix"?`},
		{"broker:\n  url: mqtt://127.0.0.1:1883\n  clientid: b\n",
			`config: line 3: unknown field "clientid" in broker; did you mean "client_id"?`},
		{"broker:\n  url: mqtts://127.0.0.1:8883\n  tls_config: {ca_fle: ca.pem}\n",
			`config: line 3: unknown field "ca_fle" in broker.tls_config; did you mean "ca_file"?`},
		{head + "colour: red\n", `config: line 5: unknown field "colour"`},
		{head + "printers:\n  - name: l1\n    url: http://127.0.0.1:1\n    http_client_config: {authorisation: {credentials: x}}\n",
			`config: printers[0].http_client_config: unknown field "authorisation"; did you mean "authorization"?`},
		{head + "printers:\n  - name: l1\n    url: http://127.0.0.1:1\n    http_client_config: {basic_auth: {usrname: x}}\n",
			`config: printers[0].http_client_config: unknown field "usrname" in basic_auth; did you mean "username"?`},
	} {
		_, err := ParseConfig([]byte(c.yaml), "")
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.yaml, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "struct") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("Go's words or more than one line: %q", err)
		}
	}
}

// FuzzParseConfig: any file either parses or gives a *ConfigError; one that names an unknown
// field does it in one line, without Go's type names; nothing panics.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"broker: {url: mqtt://127.0.0.1:1883, client_id: b}\nstate_dir: /s\nprinters: [{name: l1, url: http://127.0.0.1:1, printr: x}]\n",
		"broker: {url: mqtts://h:8883, tls_config: {ca_fle: x}}\n",
		"printers: [{name: l1, url: http://h, http_client_config: {basic_auth: {usrname: x}}}]\n",
		"state_dir: ~bob\n", "topic_prefx: a\n", "broker: [1]\n", "{", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ParseConfig(b, "/etc/lp")
		if err == nil {
			return
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("not a *ConfigError: %v", err)
		}
		if msg := err.Error(); strings.Contains(msg, "unknown field") && (strings.Contains(msg, "\n") || strings.Contains(msg, "struct {")) {
			t.Fatalf("an unknown field in Go's words: %q", msg)
		}
	})
}
