package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/mqttbridge"
	"github.com/labelprinter/go-labelprinter/outbox"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// syncBuffer is safe to write from the command and read from the test.
type syncBuffer = testkit.SyncBuffer

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	_ = os.WriteFile(bad, []byte("broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: \"a/b\", url: \"http://x\"}]\n"), 0o600)
	typo := filepath.Join(dir, "typo.yml")
	_ = os.WriteFile(typo, []byte("broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\", printr: p}]\n"), 0o600)
	noURL := filepath.Join(dir, "nourl.yml")
	_ = os.WriteFile(noURL, []byte("broker: {client_id: c}\nstate_dir: s\nprinters: [{name: p, url: \"http://x\"}]\n"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "pgpw"), []byte("pg-secret-77\n"), 0o600)
	twoPW := filepath.Join(dir, "twopw.yml")
	_ = os.WriteFile(twoPW, []byte("broker: {url: \"mqtt://b\", client_id: c}\noutbox: {postgres: {dsn: \"postgres://u:pg-secret-77@db/x\", password_file: pgpw}}\nprinters: [{name: p, url: \"http://x\"}]\n"), 0o600)
	both := filepath.Join(dir, "both.yml")
	_ = os.WriteFile(both, []byte("broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: s\noutbox: {postgres: {dsn: \"postgres://u@db/x\"}}\nprinters: [{name: p, url: \"http://x\"}]\n"), 0o600)
	// A state_dir that cannot be made, as one outside the service's StateDirectory under
	// systemd's ProtectSystem=strict, is a configuration error: the unit's
	// RestartPreventExitStatus=2 then stops the restarts.
	_ = os.WriteFile(filepath.Join(dir, "afile"), nil, 0o600)
	noState := filepath.Join(dir, "nostate.yml")
	_ = os.WriteFile(noState, []byte("broker: {url: \"mqtt://b\", client_id: c}\nstate_dir: afile/state\nprinters: [{name: p, url: \"http://x\"}]\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--config.file is required"},
		{[]string{"--config.file", noState}, "config: state_dir: mkdir " + filepath.Join(dir, "afile") + ": not a directory"},
		{[]string{"--config.file", twoPW}, "config: outbox.postgres: dsn holds a password and password_file is set"},
		{[]string{"--config.file", both}, "config: state_dir: set together with outbox.postgres"},
		{[]string{"--nope"}, "labelprinter-mqtt: unknown flag --nope\n"},
		{[]string{"--config.fle", bad}, "labelprinter-mqtt: unknown flag --config.fle (did you mean --config.file?)\n"},
		{[]string{"--config.file", filepath.Join(dir, "missing.yml")}, "config.file"},
		{[]string{"--config.file", bad}, "printers[0].name"},
		{[]string{"--config.file", typo}, `config: line 3: unknown field "printr" in printers[]; did you mean "printer"?`},
		{[]string{"--config.file", noURL}, "broker.url"},
		{[]string{"--config.file", bad, "--log-level", "loud"}, "--log-level"},
		{[]string{"--config.file", bad, "--web.listen-address", "9632"}, `--web.listen-address "9632": want host:port, such as :9632`},
	} {
		var stderr syncBuffer
		if code := run(context.Background(), c.args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, stderr.String(), c.want)
		}
		if strings.Contains(stderr.String(), "pg-secret-77") {
			t.Errorf("%v: the message carries the database password: %q", c.args, stderr.String())
		}
	}
}

// TestEmbeddedBrokerAndStop: --embedded-broker runs a plant in a box; cancelling the context
// (what SIGTERM does) stops it cleanly with exit 0.
func TestEmbeddedBrokerAndStop(t *testing.T) {
	sim, addr := simAndBrokerAddr(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("broker: {client_id: box}\nstate_dir: state\npoll_interval: 50ms\nprinters: [{name: line1, url: %q, printer: line1}]\n", sim.URL)), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--config.file", cfg, "--embedded-broker", addr}, io.Discard, &stderr)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "connected to the broker") {
		if time.Now().After(deadline) {
			t.Fatalf("the bridge did not connect to its embedded broker: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err != nil {
		t.Errorf("state_dir relative to the config file: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after a stop, want 0: %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exit after the stop")
	}
}

// TestOrphanedOutboxExit: an outbox left by a printer no longer configured, still holding a
// pending entry, stops the bridge with exit 2 naming the file, its URL and its counts;
// --adopt-orphaned-outbox ignore starts it.
func TestOrphanedOutboxExit(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "bridge.yml")
	write := func(url string) {
		_ = os.WriteFile(cfgFile, []byte(fmt.Sprintf("broker: {url: \"mqtt://127.0.0.1:1\", client_id: c}\nstate_dir: state\nprinters: [{name: line1, url: %q, printer: line1}]\n", url)), 0o600)
	}
	state := filepath.Join(dir, "state")
	_ = os.MkdirAll(state, 0o700)
	ob, err := outbox.Open(mqttbridge.StateFile(state, "http://127.0.0.1:9"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Enqueue(context.Background(), outbox.Intent{ID: "o-1", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "A"}}); err != nil {
		t.Fatal(err)
	}
	_ = ob.Close()
	write("http://127.0.0.1:8")
	var stderr syncBuffer
	if code := run(context.Background(), []string{"--config.file", cfgFile}, io.Discard, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), mqttbridge.StateFile(state, "http://127.0.0.1:9")) || !strings.Contains(stderr.String(), "1 pending and 0 unknown") {
		t.Errorf("exit %d, %q: want 2 naming the file and its counts", code, stderr.String())
	}
	stderr = syncBuffer{}
	if code := run(context.Background(), []string{"--config.file", cfgFile, "--adopt-orphaned-outbox", "http://127.0.0.1:7"}, io.Discard, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `--adopt-orphaned-outbox: "http://127.0.0.1:7" is neither ignore nor the url of a configured printer`) {
		t.Errorf("exit %d, %q: want 2 naming the flag's value", code, stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stderr = syncBuffer{}
	if code := run(ctx, []string{"--config.file", cfgFile, "--adopt-orphaned-outbox", "ignore", "--embedded-broker", "127.0.0.1:0"}, io.Discard, &stderr); code != 0 {
		t.Errorf("exit %d, %q: want a start (and a stop) with the orphan ignored", code, stderr.String())
	}
}

// TestAdoptFlagChecked: an --adopt-orphaned-outbox that is neither ignore nor a configured
// controller's URL exits 2 with the closest valid value, even with no orphaned outbox; any
// spelling of a configured URL is taken.
func TestAdoptFlagChecked(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "bridge.yml")
	_ = os.WriteFile(cfgFile, []byte("broker: {url: \"mqtt://127.0.0.1:1\", client_id: c}\nstate_dir: state\nprinters: [{name: line1, url: \"http://127.0.0.1:8\", printer: line1}]\n"), 0o600)
	for value, want := range map[string]string{
		"ignor":              `labelprinter-mqtt: --adopt-orphaned-outbox: "ignor" is neither ignore nor the url of a configured printer (did you mean ignore?)`,
		"http://127.0.0.1:9": `labelprinter-mqtt: --adopt-orphaned-outbox: "http://127.0.0.1:9" is neither ignore nor the url of a configured printer (did you mean http://127.0.0.1:8?)`,
	} {
		var stderr syncBuffer
		// Were the value taken, the bridge would run: it is stopped after a while.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		code := run(ctx, []string{"--config.file", cfgFile, "--adopt-orphaned-outbox", value}, io.Discard, &stderr)
		cancel()
		if code != 2 || stderr.String() != want+"\n" {
			t.Errorf("%s: exit %d, %q; want 2, %q", value, code, stderr.String(), want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a bridge that starts stops at once
	var stderr syncBuffer
	if code := run(ctx, []string{"--config.file", cfgFile, "--adopt-orphaned-outbox", "HTTP://127.0.0.1:8/", "--embedded-broker", "127.0.0.1:0"}, io.Discard, &stderr); code != 0 {
		t.Errorf("a configured URL in another spelling: exit %d, %q", code, stderr.String())
	}
}

// TestSecondBridgeExits1: a second bridge with the same client_id, started while the first is
// online, exits 1 naming the first's instance and the client id, and the first runs on to a
// clean stop (exit 0).
func TestSecondBridgeExits1(t *testing.T) {
	sim, addr := simAndBrokerAddr(t)
	dir := t.TempDir()
	cfg1 := filepath.Join(dir, "first.yml")
	_ = os.WriteFile(cfg1, []byte(fmt.Sprintf("broker: {client_id: box}\nstate_dir: state1\nprinters: [{name: line1, url: %q, printer: line1}]\n", sim.URL)), 0o600)
	cfg2 := filepath.Join(dir, "second.yml")
	_ = os.WriteFile(cfg2, []byte(fmt.Sprintf("broker: {url: \"mqtt://%s\", client_id: box}\nstate_dir: state2\nprinters: [{name: line1, url: %q, printer: line1}]\n", addr, sim.URL)), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr1 syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--config.file", cfg1, "--embedded-broker", addr}, io.Discard, &stderr1)
	}()
	on := waitOnline(t, addr)

	var stderr2 syncBuffer
	if code := run(context.Background(), []string{"--config.file", cfg2}, io.Discard, &stderr2); code != 1 ||
		!strings.Contains(stderr2.String(), on.Instance) || !strings.Contains(stderr2.String(), `same client_id "box"`) {
		t.Errorf("the second bridge: exit %d, stderr %q; want 1 naming %s and the client id", code, stderr2.String(), on.Instance)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("the first bridge: exit %d, want 0 after its stop: %s", code, stderr1.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exit after the stop")
	}
}

// waitOnline waits for a bridge's online message on the broker at addr and returns it.
func waitOnline(t *testing.T, addr string) mqttbridge.OnlineState {
	t.Helper()
	got := make(chan mqttbridge.OnlineState, 16)
	var conn net.Conn
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		if conn, err = net.Dial("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cli := paho.NewClient(paho.ClientConfig{ClientID: "watch", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			var s mqttbridge.OnlineState
			if json.Unmarshal(pr.Packet.Payload, &s) == nil && s.State == mqttbridge.BridgeOnline {
				got <- s
			}
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer func() { _ = cli.Disconnect(&paho.Disconnect{}); <-cli.Done() }()
	if _, err := cli.Connect(ctx, &paho.Connect{ClientID: "watch", CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "labelprinter/bridge/online", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		return s
	case <-ctx.Done():
		t.Fatal("no bridge came online")
		return mqttbridge.OnlineState{}
	}
}

// simAndBrokerAddr starts a simulator with printer line1, closed when t ends, and returns it
// with a free loopback address for an embedded broker to listen on.
func simAndBrokerAddr(t *testing.T) (*printersim.Server, string) {
	t.Helper()
	sim, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return sim, addr
}
