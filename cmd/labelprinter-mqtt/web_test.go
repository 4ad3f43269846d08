package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/mqttbridge"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// promtool returns the path of Prometheus's promtool, or skips the test when it is not
// installed; with LABELPRINTER_REQUIRE_PROMTOOL=1 its absence is a failure.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("LABELPRINTER_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus); LABELPRINTER_REQUIRE_PROMTOOL=1 makes this a failure")
	}
	return p
}

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebListenAddress runs the command with --web.listen-address and a printer behind a
// token: /healthz answers at once, /readyz once the bridge is connected; after a printJob,
// /metrics (checked by the real promtool) says so, with the build info, the outbox, the
// connection and the printer's reachability, and holds neither the token nor the controller's
// URL; after the stop, nothing listens.
func TestWebListenAddress(t *testing.T) {
	bin := promtool(t)
	const token = "tok-SECRET-2468"
	sim, err := printersim.Start(printersim.WithPrinters("line1"), printersim.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	_, addr := simAndBrokerAddr(t)
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600)
	cfg := filepath.Join(dir, "bridge.yml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("broker: {client_id: web}\nstate_dir: state\npoll_interval: 50ms\n"+
		"printers: [{name: line1, url: %q, printer: line1, http_client_config: {authorization: {credentials_file: token}}}]\n", sim.URL)), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--config.file", cfg, "--embedded-broker", addr, "--web.listen-address", "127.0.0.1:0"}, io.Discard, &stderr)
	}()
	listening := regexp.MustCompile(`serving /metrics, /healthz and /readyz" addr=(\S+)`)
	var base string
	deadline := time.Now().Add(60 * time.Second)
	for base == "" {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no web address logged: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d %q", code, body)
	}
	waitOnline(t, addr)
	for code, body := get(t, base+"/readyz"); code != 200; code, body = get(t, base+"/readyz") {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q after online", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}

	sendCommand(t, addr, "labelprinter/line1/cmd/printJob", `{"id":"web-1","job":{"labelData":{"objs":[]},"description":"web-1"}}`)
	want := []string{
		`labelprinter_mqtt_build_info{branch="",goarch="` + runtime.GOARCH + `",goos="` + runtime.GOOS + `",goversion="` + runtime.Version() + `",revision="`,
		`labelprinter_mqtt_active 1`,
		`labelprinter_mqtt_broker_connected 1`,
		`labelprinter_mqtt_command_results_total{command="printJob",state="queued"} 1`,
		`labelprinter_mqtt_command_results_total{command="printJob",state="sent"} 1`,
		`labelprinter_mqtt_outbox_entries{printer="line1",state="sent"} 1`,
		`labelprinter_mqtt_outbox_entries{printer="line1",state="unknown"} 0`,
		`labelprinter_mqtt_printer_reachable{printer="line1"} 1`,
		`labelprinter_mqtt_printer_read_error{class="none",printer="line1"} 1`,
	}
	var metrics string
	for {
		_, metrics = get(t, base+"/metrics")
		missing := ""
		for _, w := range want {
			if !strings.Contains(metrics, w) {
				missing = w
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics has no %s:\n%s", missing, metrics)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(metrics, "labelprinter_mqtt_lease") {
		t.Errorf("a bridge on state_dir has lease metrics:\n%s", metrics)
	}
	for _, secret := range []string{token, sim.URL, strings.TrimPrefix(sim.URL, "http://")} {
		if strings.Contains(metrics, secret) {
			t.Errorf("/metrics holds %q", secret)
		}
	}
	check := exec.Command(bin, "check", "metrics")
	check.Stdin = strings.NewReader(metrics)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after the stop: %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exit after the stop")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("/healthz still answers after the stop")
	}
	http.DefaultClient.CloseIdleConnections()
}

// sendCommand publishes one command at QoS 1 to the broker at addr and waits for its sent
// result.
func sendCommand(t *testing.T, addr, topic, payload string) {
	t.Helper()
	got := make(chan []byte, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cli := paho.NewClient(paho.ClientConfig{ClientID: "mes", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			got <- pr.Packet.Payload
			return true, nil
		}}})
	defer func() { _ = cli.Disconnect(&paho.Disconnect{}); <-cli.Done() }()
	if _, err := cli.Connect(ctx, &paho.Connect{ClientID: "mes", CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatal(err)
	}
	result := topic[:strings.Index(topic, "/cmd/")] + "/result"
	if _, err := cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: result, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: []byte(payload)}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case p := <-got:
			if bytes.Contains(p, []byte(`"state":"sent"`)) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no sent result for %s", payload)
		}
	}
}

// TestReadyzNotActive: a bridge that is not active (here made and never run, as a standby of
// a pair is until it holds the lease) is healthy and not ready: /healthz 200, /readyz 503
// saying so.
func TestReadyzNotActive(t *testing.T) {
	dir := t.TempDir()
	b, err := mqttbridge.New(mqttbridge.Config{
		Broker:   mqttbridge.BrokerConfig{URL: "mqtt://127.0.0.1:1", ClientID: "standby"},
		StateDir: dir,
		Printers: []mqttbridge.PrinterConfig{{Name: "line1", URL: "http://127.0.0.1:1", Printer: "line1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var logs syncBuffer
	stop, err := startWeb("127.0.0.1:0", b, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no address logged: %s", logs.String())
	}
	base := "http://" + m[1]
	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d %q, want 200", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "not active") {
		t.Errorf("/readyz: %d %q, want 503 saying not active", code, body)
	}
	if code, _ := get(t, base+"/metrics"); code != 200 {
		t.Errorf("/metrics: %d", code)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestWebAddressInUse: an address another process listens on stops the start with exit 1,
// naming the flag, before the bridge connects anywhere.
func TestWebAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yml")
	_ = os.WriteFile(cfg, []byte("broker: {url: \"mqtt://127.0.0.1:1\", client_id: c}\nstate_dir: state\nprinters: [{name: line1, url: \"http://127.0.0.1:1\", printer: line1}]\n"), 0o600)
	var stderr syncBuffer
	if code := run(context.Background(), []string{"--config.file", cfg, "--web.listen-address", ln.Addr().String()}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "labelprinter-mqtt: --web.listen-address: listen tcp "+ln.Addr().String()) {
		t.Errorf("exit %d, %q; want 1 naming --web.listen-address", code, stderr.String())
	}
}
