package mqttbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/printersim"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The crash test runs this binary again as the bridge process it kills.
	if code, ok := childMain(); ok {
		os.Exit(code)
	}
	code := m.Run()
	pgtest.Stop() // the PostgreSQL of the pair tests, if they started one
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// waitLimit bounds every wait for an event; it is a failure bound only, never measured.
const waitLimit = 60 * time.Second

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ---- the printer side ----

// plant is a simulator behind a recorder: it counts each printJob by its description (the
// tests' command id), can be taken offline (its port closed: connections refused) and brought
// back on the same port.
type plant struct {
	URL string
	Sim *printersim.Simulator
	t   testing.TB

	mu   sync.Mutex
	srv  *printersim.Server
	addr string
	jobs map[string]int // description -> printJobs that reached the printer
	// arrived is when each description's first printJob reached the printer.
	arrived map[string]time.Time
	// order is the descriptions in arrival order, per printJob path.
	order map[string][]string
	// hangUp, when set for a description, makes the printer take that printJob and drop the
	// connection without answering (the outcome is unknown to the bridge).
	hangUp map[string]bool
	// hold, when set for a description, holds that printJob until the channel is closed.
	hold map[string]chan struct{}
}

func startPlant(t testing.TB, printers ...string) *plant {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pl := &plant{t: t, jobs: map[string]int{}, arrived: map[string]time.Time{}, order: map[string][]string{}, hangUp: map[string]bool{}, hold: map[string]chan struct{}{},
		Sim: printersim.New(printersim.WithPrinters(printers...)), addr: ln.Addr().String()}
	pl.URL = "http://" + pl.addr
	pl.srv = printersim.Serve(ln, pl.Sim, pl.wrap)
	t.Cleanup(func() { pl.setDown(true) })
	return pl
}

func (pl *plant) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/printJob") {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var j struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(body, &j)
		if len(bytes.TrimSpace(body)) == 0 || string(bytes.TrimSpace(body)) == "{}" {
			j.Description = "<deselect>"
		}
		pl.mu.Lock()
		pl.jobs[j.Description]++
		if _, ok := pl.arrived[j.Description]; !ok {
			pl.arrived[j.Description] = time.Now()
		}
		pl.order[r.URL.Path] = append(pl.order[r.URL.Path], j.Description)
		hang := pl.hangUp[j.Description]
		held := pl.hold[j.Description]
		pl.mu.Unlock()
		if held != nil {
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		if hang {
			hangUp(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("no hijacker")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		_ = c.Close()
	}
}

// setDown closes the printer's port (down) or opens it again on the same address.
func (pl *plant) setDown(down bool) {
	pl.mu.Lock()
	srv := pl.srv
	pl.mu.Unlock()
	if down {
		if srv != nil {
			srv.Close()
			pl.mu.Lock()
			pl.srv = nil
			pl.mu.Unlock()
		}
		return
	}
	if srv != nil {
		return
	}
	var ln net.Listener
	eventually(pl.t, "the printer's port again", func() bool {
		var err error
		ln, err = net.Listen("tcp", pl.addr)
		return err == nil
	})
	pl.mu.Lock()
	pl.srv = printersim.Serve(ln, pl.Sim, pl.wrap)
	pl.mu.Unlock()
}

func (pl *plant) printed(desc string) int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.jobs[desc]
}

func (pl *plant) arrivals(printer string) []string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return append([]string(nil), pl.order["/api/v3/printers/"+printer+"/printJob"]...)
}

// ---- the broker side ----

// watcher is an MQTT 5 client that records every message on the filters it subscribed to.
type watcher struct {
	t   testing.TB
	cli *paho.Client
	mu  sync.Mutex
	got []*paho.Publish
}

func dialMQTT(t testing.TB, brokerURL, clientID string, onPublish func(paho.PublishReceived) (bool, error)) *paho.Client {
	t.Helper()
	addr := strings.TrimPrefix(brokerURL, "mqtt://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg := paho.ClientConfig{ClientID: clientID, Conn: conn}
	if onPublish != nil {
		cfg.OnPublishReceived = []func(paho.PublishReceived) (bool, error){onPublish}
	}
	cli := paho.NewClient(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ca, err := cli.Connect(ctx, &paho.Connect{ClientID: clientID, CleanStart: true, KeepAlive: 30})
	if err != nil {
		t.Fatalf("connect %s: %v", clientID, err)
	}
	if ca.ReasonCode != 0 {
		t.Fatalf("connect %s: reason %d", clientID, ca.ReasonCode)
	}
	t.Cleanup(func() {
		_ = cli.Disconnect(&paho.Disconnect{})
		<-cli.Done()
	})
	return cli
}

// watch subscribes a new client to filter (at QoS 1) and records what arrives.
func watch(t testing.TB, brokerURL, filter string) *watcher {
	t.Helper()
	w := &watcher{t: t}
	w.cli = dialMQTT(t, brokerURL, fmt.Sprintf("watch-%d", time.Now().UnixNano()), func(pr paho.PublishReceived) (bool, error) {
		w.mu.Lock()
		w.got = append(w.got, pr.Packet)
		w.mu.Unlock()
		return true, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := w.cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	return w
}

// results returns the results recorded on topic, in arrival order.
func (w *watcher) results(topic string) []Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Result
	for _, p := range w.got {
		if p.Topic != topic {
			continue
		}
		var r Result
		if err := json.Unmarshal(p.Payload, &r); err != nil {
			w.t.Errorf("result on %s is not JSON: %q", topic, p.Payload)
			continue
		}
		out = append(out, r)
	}
	return out
}

// resultsOf returns the states recorded for id on topic, in order.
func (w *watcher) statesOf(topic, id string) []string {
	var out []string
	for _, r := range w.results(topic) {
		if r.ID == id {
			out = append(out, r.State)
		}
	}
	return out
}

// waitStates waits until id's states on topic are exactly want (failing on any other).
func (w *watcher) waitStates(topic, id string, want ...string) {
	w.t.Helper()
	eventually(w.t, fmt.Sprintf("%s states %v on %s", id, want, topic), func() bool {
		got := w.statesOf(topic, id)
		if len(got) > len(want) || !equal(got, want[:len(got)]) {
			w.t.Fatalf("%s: states %v, want %v", id, got, want)
		}
		return len(got) == len(want)
	})
}

// last returns the payload of the last message on topic, or nil.
func (w *watcher) last(topic string) *paho.Publish {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.got) - 1; i >= 0; i-- {
		if w.got[i].Topic == topic {
			return w.got[i]
		}
	}
	return nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sender publishes commands at QoS 1.
type sender struct {
	t   testing.TB
	cli *paho.Client
}

func newSender(t testing.TB, brokerURL string) *sender {
	return &sender{t: t, cli: dialMQTT(t, brokerURL, fmt.Sprintf("mes-%d", time.Now().UnixNano()), nil)}
}

func (s *sender) send(topic string, payload any, props ...func(*paho.Publish)) {
	s.t.Helper()
	var b []byte
	switch v := payload.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			s.t.Fatal(err)
		}
	}
	p := &paho.Publish{Topic: topic, QoS: 1, Payload: b}
	for _, f := range props {
		f(p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := s.cli.Publish(ctx, p); err != nil {
		s.t.Fatalf("publish %s: %v", topic, err)
	}
}

// job is a print job whose description is id, so the plant can count it.
func job(id string) map[string]any {
	return map[string]any{"labelData": map[string]any{"text": id}, "description": id}
}

func printJobCmd(id string) map[string]any { return map[string]any{"id": id, "job": job(id)} }

// ---- the bridge ----

// testConfig is a configuration for printers of one plant, each named as on the plant.
func testConfig(t testing.TB, brokerURL string, pl *plant, printers ...string) Config {
	cfg := Config{
		Broker:       BrokerConfig{URL: brokerURL, ClientID: "bridge-" + strings.ReplaceAll(t.Name(), "/", "-")},
		StateDir:     t.TempDir(),
		PollInterval: 20 * time.Millisecond,
	}
	for _, p := range printers {
		cfg.Printers = append(cfg.Printers, PrinterConfig{Name: p, URL: pl.URL, Printer: p})
	}
	return cfg
}

// running is a Bridge running in this process.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func startBridge(t testing.TB, cfg Config) *running {
	t.Helper()
	var opts []Option
	if os.Getenv("MQTTBRIDGE_DEBUG") != "" {
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	b, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return runBridge(t, b)
}

// runBridge runs b until the test ends or stop is called.
func runBridge(t testing.TB, b *Bridge) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- b.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop stops the bridge as SIGTERM does and waits for Run to return.
func (r *running) stop(t testing.TB) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after its context ended")
	}
}

func startTestBroker(t testing.TB) *Broker {
	t.Helper()
	b, err := StartBroker("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// onlineStateOf is the State of a message on the bridge's online topic ("" when it is no
// OnlineState).
func onlineStateOf(p *paho.Publish) string {
	var s OnlineState
	if json.Unmarshal(p.Payload, &s) != nil {
		return ""
	}
	return s.State
}

// onlines counts the "online" messages seen: one per (re)connect of a bridge.
func (w *watcher) onlines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.got {
		if p.Topic == onlineTopic(prefix) && onlineStateOf(p) == BridgeOnline {
			n++
		}
	}
	return n
}

// waitOnline waits for the n-th "online": a bridge has subscribed to its commands.
func (w *watcher) waitOnline(n int) {
	w.t.Helper()
	eventually(w.t, fmt.Sprintf("online #%d", n), func() bool { return w.onlines() >= n })
}
