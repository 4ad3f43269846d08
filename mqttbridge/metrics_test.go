package mqttbridge

import (
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
