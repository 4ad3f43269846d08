package mqttbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

// The files of examples/mqtt, run as they are by a real mosquitto: only the listener and the
// paths of the password file, the ACL and the persistence directory are the test's own.

// exampleMosquitto is mosquitto running examples/mqtt/mosquitto.conf and labelprinter.acl,
// with the users mes, bridge and operator (password: the user's name and "-pw").
type exampleMosquitto struct {
	*mosquitto
	log  *testkit.SyncBuffer // mosquitto's log
	conf string              // the example's text
}

func exampleDir() string { return filepath.Join("..", "examples", "mqtt") }

func startExampleMosquitto(t *testing.T) *exampleMosquitto {
	t.Helper()
	bin := mosquittoBin(t)
	passwd, err := exec.LookPath("mosquitto_passwd")
	if bin == "" || err != nil {
		t.Skip("mosquitto or mosquitto_passwd is not installed (Debian: apt-get install mosquitto); MQTTBRIDGE_MOSQUITTO=required makes this a failure")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "passwd")
	for i, u := range []string{"mes", "bridge", "operator"} {
		args := []string{"-b", pw, u, u + "-pw"}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v %s", err, out)
		}
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	// mosquitto started as root reads its files and writes its persistence as the mosquitto user.
	_ = os.Chmod(data, 0o777)
	_ = os.Chmod(pw, 0o644)
	_ = os.Chmod(dir, 0o755)
	_ = os.Chmod(filepath.Dir(dir), 0o755)
	aclText, err := os.ReadFile(filepath.Join(exampleDir(), "labelprinter.acl"))
	if err != nil {
		t.Fatal(err)
	}
	acl := writeFile(t, dir, "labelprinter.acl", string(aclText))
	_ = os.Chmod(acl, 0o644)
	confText, err := os.ReadFile(filepath.Join(exampleDir(), "mosquitto.conf"))
	if err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	ours := map[string]string{
		"listener":             port + " 127.0.0.1",
		"password_file":        pw,
		"acl_file":             acl,
		"persistence_location": data + "/",
	}
	var lines []string
	for _, line := range strings.Split(string(confText), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			if v, ok := ours[f[0]]; ok {
				line = f[0] + " " + v
				delete(ours, f[0])
			}
		}
		lines = append(lines, line)
	}
	if len(ours) > 0 {
		t.Fatalf("the example mosquitto.conf sets none of %v", ours)
	}
	lines = append(lines, "log_dest stderr")
	m := &exampleMosquitto{
		mosquitto: &mosquitto{bin: bin, conf: writeFile(t, dir, "mosquitto.conf", strings.Join(lines, "\n")), addr: addr},
		log:       &testkit.SyncBuffer{},
		conf:      string(confText),
	}
	_ = os.Chmod(m.mosquitto.conf, 0o644)
	m.out = m.log
	m.start(t)
	t.Cleanup(func() {
		m.stop()
		if t.Failed() {
			t.Logf("mosquitto's log:\n%s", m.log)
		}
	})
	return m
}

// waitDisconnected waits until mosquitto has logged the n-th end of clientID's connection.
// A client's Disconnect returns once it has sent DISCONNECT, and mosquitto may read another
// client's publishes first: published to a session still connected, they are not held to
// max_queued_bytes (mosquitto counts the client's Receive Maximum in flight beyond it), and
// under load all 152 of the test's large commands were delivered that way.
func (m *exampleMosquitto) waitDisconnected(t *testing.T, clientID string, n int) {
	t.Helper()
	line := "Client " + clientID + " disconnected"
	eventually(t, fmt.Sprintf("mosquitto logs %q %d time(s)", line, n), func() bool {
		return strings.Count(m.log.String(), line) >= n
	})
}

// setting returns the value of a mosquitto.conf option of the example.
func (m *exampleMosquitto) setting(t *testing.T, name string) int {
	t.Helper()
	for _, line := range strings.Split(m.conf, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("the example mosquitto.conf does not set %s", name)
	return 0
}

// mqttUser is one client logged in as a user of the example, recording what it receives.
type mqttUser struct {
	t   *testing.T
	cli *paho.Client
	mu  sync.Mutex
	got []*paho.Publish
}

// login connects as user; sessionExpiry > 0 keeps (and resumes) a session under clientID.
func (m *exampleMosquitto) login(t *testing.T, user, clientID string, sessionExpiry uint32) *mqttUser {
	t.Helper()
	conn, err := net.Dial("tcp", m.addr)
	if err != nil {
		t.Fatal(err)
	}
	u := &mqttUser{t: t}
	cli := paho.NewClient(paho.ClientConfig{Conn: conn, OnPublishReceived: []func(paho.PublishReceived) (bool, error){
		func(pr paho.PublishReceived) (bool, error) {
			u.mu.Lock()
			u.got = append(u.got, pr.Packet)
			u.mu.Unlock()
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cp := &paho.Connect{ClientID: clientID, CleanStart: sessionExpiry == 0, KeepAlive: 30,
		UsernameFlag: true, Username: user, PasswordFlag: true, Password: []byte(user + "-pw")}
	if sessionExpiry > 0 {
		cp.Properties = &paho.ConnectProperties{SessionExpiryInterval: &sessionExpiry}
	}
	ca, err := cli.Connect(ctx, cp)
	if err != nil || ca.ReasonCode != 0 {
		t.Fatalf("%s: connect: %v %v", user, ca, err)
	}
	u.cli = cli
	t.Cleanup(u.close)
	return u
}

func (u *mqttUser) close() {
	if u.cli != nil {
		_ = u.cli.Disconnect(&paho.Disconnect{})
		<-u.cli.Done()
		u.cli = nil
	}
}

func (u *mqttUser) subscribe(filter string) byte {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	sa, err := u.cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	if err != nil && sa == nil {
		u.t.Fatalf("subscribe %s: %v", filter, err)
	}
	return sa.Reasons[0]
}

// publish sends payload at QoS 1 and returns the broker's reason code.
func (u *mqttUser) publish(topic string, payload []byte) byte {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	resp, err := u.cli.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: payload})
	if resp == nil {
		u.t.Fatalf("publish %s: %v", topic, err)
	}
	return resp.ReasonCode
}

func (u *mqttUser) received() []*paho.Publish {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*paho.Publish(nil), u.got...)
}

func (u *mqttUser) topics() map[string]int {
	n := map[string]int{}
	for _, p := range u.received() {
		n[p.Topic]++
	}
	return n
}

// TestExampleACL runs the real bridge on mosquitto with the example mosquitto.conf and ACL:
// mosquitto starts without a warning; the bridge, as user bridge, goes online and publishes
// status, counters, results and its outbox without a warning of its own; the MES sends a
// command and reads its results; an operator reads status, counters, the outbox and online,
// and nothing else; only the MES may publish a command, and nobody but the bridge its state.
func TestExampleACL(t *testing.T) {
	m := startExampleMosquitto(t)
	if strings.Contains(m.log.String(), "Warning") {
		t.Errorf("mosquitto warns at start:\n%s", m.log)
	}
	mes := m.login(t, "mes", "mes-acl", 0)
	operator := m.login(t, "operator", "operator-acl", 0)
	for _, u := range []*mqttUser{mes, operator} {
		if rc := u.subscribe(prefix + "/#"); rc >= 0x80 {
			t.Fatalf("subscribing to %s/#: reason %#x", prefix, rc)
		}
	}

	pl := startPlant(t, "line1")
	dir := t.TempDir()
	cfg := testConfig(t, "mqtt://"+m.addr, pl, "line1")
	cfg.Broker.Username = "bridge"
	cfg.Broker.PasswordFile = writeFile(t, dir, "mqtt-password", "bridge-pw\n")
	bridgeLog := &testkit.SyncBuffer{}
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(bridgeLog, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		t.Fatal(err)
	}
	r := runBridge(t, b)
	onlineTopic := onlineTopic(prefix)
	eventually(t, "the operator sees the bridge online", func() bool { return operator.topics()[onlineTopic] > 0 })

	cmd, _ := json.Marshal(printJobCmd("acl-1"))
	if rc := mes.publish(cmdTopic("line1", "printJob"), cmd); rc >= 0x80 {
		t.Fatalf("the MES publishing a command: reason %#x, want success", rc)
	}
	eventually(t, "acl-1 printed and its result sent", func() bool {
		for _, p := range mes.received() {
			if p.Topic == resultTopic("line1") && strings.Contains(string(p.Payload), `"state":"sent"`) {
				return true
			}
		}
		return false
	})
	outboxTopic := printerTopic(prefix, "line1", topicOutbox)
	eventually(t, "the operator sees the outbox with acl-1 sent", func() bool {
		for _, p := range operator.received() {
			if p.Topic == outboxTopic && strings.Contains(string(p.Payload), `"sent":1`) {
				return true
			}
		}
		return false
	})
	eventually(t, "the operator sees status and counters", func() bool {
		n := operator.topics()
		return n[printerTopic(prefix, "line1", topicStatus)] > 0 && n[printerTopic(prefix, "line1", topicCounters)] > 0
	})
	if pl.printed("acl-1") != 1 {
		t.Errorf("acl-1 printed %d times, want 1", pl.printed("acl-1"))
	}

	// mosquitto closes a connection after refusing a publish: one login for each.
	for i, c := range []struct {
		user, topic string
		ok          bool
	}{
		{"mes", cmdTopic("line2", "printJob"), true},
		{"operator", cmdTopic("line2", "printJob"), false},
		{"bridge", cmdTopic("line2", "printJob"), false},
		{"mes", printerTopic(prefix, "line2", topicStatus), false},
		{"operator", printerTopic(prefix, "line2", topicOutbox), false},
		{"operator", onlineTopic, false},
		{"bridge", printerTopic(prefix, "line2", topicOutbox), true},
	} {
		u := m.login(t, c.user, fmt.Sprintf("%s-publish-%d", c.user, i), 0)
		rc := u.publish(c.topic, []byte(`{"id":"acl-2"}`))
		if ok := rc < 0x80; ok != c.ok {
			t.Errorf("user %s publishing %s: reason %#x, want allowed %v", c.user, c.topic, rc, c.ok)
		}
		u.close()
	}
	r.stop(t)

	for topic := range operator.topics() {
		leaf := topic[strings.LastIndex(topic, "/")+1:]
		if topic != onlineTopic && leaf != topicStatus && leaf != topicCounters && leaf != topicOutbox {
			t.Errorf("an operator read %s", topic)
		}
	}
	if n := mes.topics()[resultTopic("line1")]; n < 2 {
		t.Errorf("the MES read %d results of line1, want queued and sent", n)
	}
	if s := bridgeLog.String(); s != "" {
		t.Errorf("the bridge logged at warn or above:\n%s", s)
	}
}

// TestExampleMosquittoQueue: with the example mosquitto.conf, commands sent while the bridge
// is down wait in its session, bounded by their bytes and not by their count: 10,100 small
// commands all arrive (max_queued_messages 10000 dropped 100 of them, acknowledged all the
// same); past max_queued_bytes, mosquitto drops the newest commands, acknowledges them to the
// MES as if taken, and logs "Outgoing messages are being dropped for client", as the README
// says.
func TestExampleMosquittoQueue(t *testing.T) {
	m := startExampleMosquitto(t)
	if n := m.setting(t, "max_queued_messages"); n != 0 {
		t.Errorf("max_queued_messages %d, want 0 (no cap on the count)", n)
	}
	limit := m.setting(t, "max_queued_bytes")
	const clientID = "labelprinter-line3"
	filter := commandFilter(prefix)

	bridge := m.login(t, "bridge", clientID, 3600)
	if rc := bridge.subscribe(filter); rc >= 0x80 {
		t.Fatalf("the bridge subscribing to %s: reason %#x", filter, rc)
	}
	bridge.close()
	m.waitDisconnected(t, clientID, 1)
	mes := m.login(t, "mes", "mes-queue", 0)

	// 10,100 small commands, 64 at a time.
	const small = 10100
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	refused := make(chan string, small)
	for i := range small {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			payload := fmt.Sprintf(`{"id":"q-%d","job":{"description":"q-%d"}}`, i, i)
			resp, err := mes.cli.Publish(ctx, &paho.Publish{Topic: cmdTopic("line1", "printJob"), QoS: 1, Payload: []byte(payload)})
			if resp == nil || resp.ReasonCode >= 0x80 {
				refused <- fmt.Sprintf("q-%d: %v %v", i, resp, err)
			}
		}()
	}
	wg.Wait()
	close(refused)
	for r := range refused {
		t.Fatalf("a small command was refused: %s", r)
	}
	bridge = m.login(t, "bridge", clientID, 3600)
	eventually(t, "all 10,100 small commands delivered", func() bool { return len(bridge.received()) >= small })
	ids := map[string]bool{}
	for _, p := range bridge.received() {
		ids[string(p.Payload)] = true
	}
	if len(ids) != small {
		t.Fatalf("%d distinct commands of %d delivered", len(ids), small)
	}
	if strings.Contains(m.log.String(), "dropped") {
		t.Fatalf("mosquitto dropped small commands:\n%s", m.log)
	}
	bridge.close()
	m.waitDisconnected(t, clientID, 2)

	// Then past the limit: commands of 512 KiB, 24 more than it holds.
	const size = 512 << 10
	sent := limit/size + 24
	payload := bytes.Repeat([]byte("x"), size)
	for i := range sent {
		copy(payload, fmt.Sprintf("%04d", i))
		if rc := mes.publish(cmdTopic("line1", "printJob"), payload); rc >= 0x80 {
			t.Fatalf("large command %d: reason %#x; the README says mosquitto acknowledges it", i, rc)
		}
	}
	const logLine = "Outgoing messages are being dropped for client " + clientID
	if !strings.Contains(m.log.String(), logLine) {
		t.Errorf("mosquitto's log does not say %q", logLine)
	}
	bridge = m.login(t, "bridge", clientID, 3600)
	var got []*paho.Publish
	stable := time.Now()
	eventually(t, "the large commands' delivery settles", func() bool {
		if now := bridge.received(); len(now) != len(got) {
			got, stable = now, time.Now()
		}
		return len(got) > 0 && time.Since(stable) > time.Second
	})
	if len(got) >= sent {
		t.Fatalf("all %d large commands (%d bytes) delivered past max_queued_bytes %d", sent, sent*size, limit)
	}
	// The oldest arrive, in order; the newest were dropped.
	for i, p := range got {
		if want := fmt.Sprintf("%04d", i); string(p.Payload[:4]) != want {
			t.Fatalf("delivered command %d is %s, want %s", i, p.Payload[:4], want)
		}
	}
	// What arrived is the limit, give or take the in-flight window mosquitto keeps beyond it.
	if bytes := len(got) * size; bytes < limit-size || bytes > limit+20*size {
		t.Errorf("%d bytes delivered, want about max_queued_bytes %d", bytes, limit)
	}
	t.Logf("%d of %d large commands of %d bytes delivered (%d bytes; max_queued_bytes %d)", len(got), sent, size, len(got)*size, limit)
}
