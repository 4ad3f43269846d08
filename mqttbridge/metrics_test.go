package mqttbridge

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/prometheus/client_golang/prometheus"
)

// gather returns the bridge's metrics as name{label="value",...} -> value.
func gather(t *testing.T, b *Bridge) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			out[key] = v
		}
	}
	return out
}

// TestPairHealth: of a pair of bridges, the one holding the lease is active, connected and
// ready, and its metrics say the lease is held and renewed within its TTL; the standby is
// neither active nor connected (healthy, not ready), says the lease is not held, and reports
// no outbox and no printer; once the active one stops, the standby takes over and becomes
// ready, with the outbox of the commands it executes, and the stopped one is not ready.
func TestPairHealth(t *testing.T) {
	dsn := pgtest.DSN(t)
	bk := newEmbedded(t)
	pl := startPlant(t, "p1")
	cfg := testConfig(t, bk.URL(), pl, "p1")
	cfg.StateDir = ""
	const ttl = 2 * time.Second
	cfg.Outbox = OutboxConfig{Postgres: &PostgresConfig{DSN: dsn}, LeaseTTL: ttl}
	w := watch(t, bk.URL(), prefix+"/#")

	first, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h := first.Health(); h.Active || h.Connected || h.Ready() {
		t.Errorf("before Run: %+v, ready %v", h, h.Ready())
	}
	r1 := runBridge(t, first)
	w.waitOnline(1)
	eventually(t, "the first bridge ready", func() bool { return first.Health().Ready() })
	r2 := runBridge(t, second)
	time.Sleep(300 * time.Millisecond) // the standby has looked at the lease
	if h := second.Health(); h.Active || h.Connected || h.Ready() {
		t.Errorf("the standby: %+v, ready %v; want neither active nor connected", h, h.Ready())
	}
	m1, m2 := gather(t, first), gather(t, second)
	if m1["labelprinter_mqtt_lease_held"] != 1 || m1["labelprinter_mqtt_active"] != 1 || m1["labelprinter_mqtt_broker_connected"] != 1 {
		t.Errorf("the active bridge's metrics: %v", m1)
	}
	if age, ok := m1["labelprinter_mqtt_lease_renewal_age_seconds"]; !ok || age < 0 || age > (ttl*4/5).Seconds() {
		t.Errorf("the active bridge's lease renewal age: %v (reported %v), want within 4/5 of the TTL %v", age, ok, ttl)
	}
	for k := range m2 {
		switch k {
		case "labelprinter_mqtt_lease_held", "labelprinter_mqtt_active", "labelprinter_mqtt_broker_connected":
			if m2[k] != 0 {
				t.Errorf("the standby: %s %v, want 0", k, m2[k])
			}
		default:
			t.Errorf("the standby reports %s", k)
		}
	}

	r1.stop(t)
	if h := first.Health(); h.Ready() {
		t.Errorf("the stopped bridge: %+v, ready", h)
	}
	w.waitOnline(2)
	eventually(t, "the second bridge ready", func() bool { return second.Health().Ready() })
	newSender(t, bk.URL()).send(cmdTopic("p1", "printJob"), printJobCmd("health-1"))
	w.waitStates(resultTopic("p1"), "health-1", StateQueued, StateSent)
	eventually(t, "the second bridge's outbox metrics", func() bool {
		m := gather(t, second)
		return m["labelprinter_mqtt_outbox_entries,printer=p1,state=sent"] == 1 && m["labelprinter_mqtt_lease_held"] == 1 &&
			m["labelprinter_mqtt_command_results_total,command=printJob,state=sent"] == 1
	})
	r2.stop(t)
	if h := second.Health(); h.Active || h.Connected {
		t.Errorf("the second bridge after its stop: %+v", h)
	}
}

// TestNotReadyWhileBrokerGone: ready is active and connected. A bridge whose broker went away
// is still active but not ready, and its broker-connected metric is 0, for as long as it
// cannot connect; once the broker is back it is ready again and the metric 1. Through each
// broker.
func TestNotReadyWhileBrokerGone(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		var log syncLog
		b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		if err != nil {
			t.Fatal(err)
		}
		runBridge(t, b)
		w.waitOnline(1)
		eventually(t, "the bridge ready", func() bool { return b.Health().Ready() })
		if m := gather(t, b); m["labelprinter_mqtt_broker_connected"] != 1 {
			t.Errorf("connected: broker_connected %v, want 1", m["labelprinter_mqtt_broker_connected"])
		}

		bk.stop()
		eventually(t, "the bridge sees the broker gone", func() bool { return strings.Contains(log.String(), "cannot connect to the broker") })
		if h := b.Health(); h.Ready() || h.Connected || !h.Active {
			t.Errorf("with the broker gone: %+v, ready %v; want active, not connected, not ready", h, h.Ready())
		}
		m := gather(t, b)
		if v, ok := m["labelprinter_mqtt_broker_connected"]; !ok || v != 0 {
			t.Errorf("with the broker gone: broker_connected %v (reported %v), want 0", v, ok)
		}
		if m["labelprinter_mqtt_active"] != 1 {
			t.Errorf("with the broker gone: active %v, want 1", m["labelprinter_mqtt_active"])
		}

		bk.start(t)
		eventually(t, "the bridge ready again", func() bool { return b.Health().Ready() })
		if m := gather(t, b); m["labelprinter_mqtt_broker_connected"] != 1 {
			t.Errorf("the broker back: broker_connected %v, want 1", m["labelprinter_mqtt_broker_connected"])
		}
	})
}
