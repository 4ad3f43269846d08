package mqttbridge

import (
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestPrinterReadErrors: a printer that cannot be read is logged at warn once per change of
// the reason, its P/status carries the reason in the configuration's words, and the metrics
// say it is unreachable and why: a printer name the controller does not know (404), a
// controller that wants a token (401), one whose certificate is not trusted (TLS), and one
// whose port is closed (connection refused), which then comes back.
func TestPrinterReadErrors(t *testing.T) {
	const token = "tok-SECRET-8765"
	pl := startPlant(t, "line1")
	authSim, err := printersim.Start(printersim.WithPrinters("line1"), printersim.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	defer authSim.Close()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes the bridge refuses
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	cfg := testConfig(t, bk.URL(), pl, "line1")
	cfg.Printers = append(cfg.Printers,
		PrinterConfig{Name: "line9", URL: pl.URL, Printer: "line9"},
		PrinterConfig{Name: "auth", URL: authSim.URL, Printer: "line1"},
		PrinterConfig{Name: "tls", URL: tlsSrv.URL, Printer: "line1"})
	logs := &testkit.SyncBuffer{}
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.Collector())
	r := runBridge(t, b)

	status := func(name string) statusPayload {
		var s statusPayload
		if m := w.last(printerTopic(prefix, name, topicStatus)); m != nil {
			_ = json.Unmarshal(m.Payload, &s)
		}
		return s
	}
	waitReason := func(name, want string) {
		t.Helper()
		eventually(t, name+"'s status saying "+want, func() bool {
			s := status(name)
			if want == "" {
				return s.Reachable && s.Reason == ""
			}
			return !s.Reachable && strings.Contains(s.Reason, want)
		})
	}
	waitReason("line1", "")
	waitReason("line9", "no printer named line9 on the controller: check printers[1].printer")
	waitReason("auth", "the controller refused the credentials (401): check printers[2].http_client_config")
	waitReason("tls", "TLS: check printers[3].url")
	checkMetrics(t, reg, map[string]string{"line1": "none", "line9": "not_found", "auth": "unauthorized", "tls": "tls"})

	pl.setDown(true)
	waitReason("line1", "connection refused: check printers[0].url")
	waitReason("line9", "connection refused: check printers[1].url")
	checkMetrics(t, reg, map[string]string{"line1": "connection_refused", "line9": "connection_refused"})
	time.Sleep(20 * cfg.PollInterval) // more failed reads, of the same reason
	pl.setDown(false)
	waitReason("line1", "")
	r.stop(t)

	warned := map[string][]string{}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, `msg="cannot read the printer"`) {
			f := strings.Fields(line[strings.Index(line, "printer="):])
			warned[strings.TrimPrefix(f[0], "printer=")] = append(warned[strings.TrimPrefix(f[0], "printer=")], f[1])
		}
	}
	for name, want := range map[string][]string{
		"line1": {"class=connection_refused"},
		"line9": {"class=not_found", "class=connection_refused"},
		"auth":  {"class=unauthorized"},
		"tls":   {"class=tls"},
	} {
		if name == "line9" && len(warned[name]) == 3 && warned[name][2] == "class=not_found" {
			warned[name] = warned[name][:2] // read once more after the port opened again
		}
		if !equal(warned[name], want) {
			t.Errorf("%s: warned %v, want %v", name, warned[name], want)
		}
	}
	if n := strings.Count(logs.String(), `msg="the printer can be read again" printer=line1`); n != 1 {
		t.Errorf("line1 said it can be read again %d times, want 1", n)
	}
	if strings.Contains(logs.String(), token[:12]) {
		t.Errorf("the token is in the log:\n%s", logs)
	}
	if t.Failed() {
		t.Logf("the bridge's log:\n%s", logs)
	}
}

// checkMetrics checks each printer's labelprinter_mqtt_printer_reachable and the class of
// labelprinter_mqtt_printer_read_error (none: reachable).
func checkMetrics(t *testing.T, reg *prometheus.Registry, want map[string]string) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	reach, class := map[string]float64{}, map[string][]string{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := labels(m)
			switch mf.GetName() {
			case "labelprinter_mqtt_printer_reachable":
				reach[l["printer"]] = m.GetGauge().GetValue()
			case "labelprinter_mqtt_printer_read_error":
				class[l["printer"]] = append(class[l["printer"]], l["class"])
			}
		}
	}
	for p, c := range want {
		wantReach := 0.0
		if c == "none" {
			wantReach = 1
		}
		if reach[p] != wantReach || !equal(class[p], []string{c}) {
			t.Errorf("%s: reachable %v, read error classes %v; want %v, [%s]", p, reach[p], class[p], wantReach, c)
		}
	}
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// TestStatusReadFails: a controller whose /status fails while the printer's counters read
// makes the printer's P/status say reachable:false with a reason naming the failed read, and
// the metrics say so; a /status answering 500 and one that hangs are each warned about once,
// and the printer is reachable again, with its state, once /status answers.
func TestStatusReadFails(t *testing.T) {
	for _, tc := range []struct {
		name, reason, class string
	}{
		{"500", "the controller's status cannot be read (GET /status): the controller answered 500", "http_status"},
		{"hang", "the controller's status cannot be read (GET /status): no answer in time", "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failing atomic.Bool
			failing.Store(true)
			released := make(chan struct{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := printersim.Serve(ln, printersim.New(printersim.WithPrinters("line1")), func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/api/v3/status" || !failing.Load() {
						next.ServeHTTP(w, r)
						return
					}
					if tc.name == "hang" {
						select {
						case <-r.Context().Done():
						case <-released:
						}
						return
					}
					http.Error(w, `{"message":"status unavailable"}`, http.StatusInternalServerError)
				})
			})
			defer srv.Close()
			defer close(released)

			bk := newEmbedded(t)
			w := watch(t, bk.URL(), prefix+"/#")
			cfg := Config{Broker: BrokerConfig{URL: bk.URL(), ClientID: "bridge-status-" + tc.name}, StateDir: t.TempDir(),
				PollInterval: 20 * time.Millisecond, Printers: []PrinterConfig{{Name: "line1", URL: srv.URL, Printer: "line1"}}}
			logs := &testkit.SyncBuffer{}
			b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(b.Collector())
			r := runBridge(t, b)

			type payload struct {
				Reachable bool   `json:"reachable"`
				Reason    string `json:"reason"`
				State     string `json:"state"`
			}
			status := func() payload {
				var s payload
				if m := w.last(printerTopic(prefix, "line1", topicStatus)); m != nil {
					_ = json.Unmarshal(m.Payload, &s)
				}
				return s
			}
			eventually(t, "line1's counters", func() bool { return w.last(printerTopic(prefix, "line1", topicCounters)) != nil })
			eventually(t, "line1's status naming the failed /status read", func() bool {
				s := status()
				return !s.Reachable && strings.Contains(s.Reason, tc.reason)
			})
			if s := status(); s.State != "" {
				t.Errorf("state %q without a /status answer", s.State)
			}
			checkMetrics(t, reg, map[string]string{"line1": tc.class})

			failing.Store(false)
			eventually(t, "line1 reachable again with its state", func() bool {
				s := status()
				return s.Reachable && s.Reason == "" && s.State != ""
			})
			checkMetrics(t, reg, map[string]string{"line1": "none"})
			r.stop(t)
			if n := strings.Count(logs.String(), `msg="cannot read the controller's status"`); n != 1 {
				t.Errorf("warned %d times about /status, want 1:\n%s", n, logs)
			}
			if n := strings.Count(logs.String(), `msg="the controller's status can be read again"`); n != 1 {
				t.Errorf("said /status can be read again %d times, want 1:\n%s", n, logs)
			}
		})
	}
}
