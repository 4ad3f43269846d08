package main

import (
	"context"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/mqttbridge"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"
)

// promConfig is the part of a Prometheus configuration the example's probes depend on.
type promConfig struct {
	ScrapeConfigs []struct {
		JobName       string              `yaml:"job_name"`
		MetricsPath   string              `yaml:"metrics_path"`
		Params        map[string][]string `yaml:"params"`
		StaticConfigs []struct {
			Targets []string          `yaml:"targets"`
			Labels  map[string]string `yaml:"labels"`
		} `yaml:"static_configs"`
		RelabelConfigs []struct {
			SourceLabels []string `yaml:"source_labels"`
			TargetLabel  string   `yaml:"target_label"`
			Replacement  *string  `yaml:"replacement"`
			Action       string   `yaml:"action"`
			Regex        string   `yaml:"regex"`
		} `yaml:"relabel_configs"`
	} `yaml:"scrape_configs"`
}

// TestExamplePrometheusConfig applies the example's relabeling the way Prometheus does (the
// default replace action) and checks that every probe it makes is one the exporter accepts,
// sent to the exporter, with the controller as instance.
func TestExamplePrometheusConfig(t *testing.T) {
	b, err := os.ReadFile("../../examples/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg promConfig
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	modules, err := loadConfigFile("../../examples/prometheus/labelprinter-exporter.yml")
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, sc := range cfg.ScrapeConfigs {
		if sc.MetricsPath != "/probe" {
			continue
		}
		for _, st := range sc.StaticConfigs {
			for _, tgt := range st.Targets {
				labels := map[string]string{"__address__": tgt, "job": sc.JobName}
				for k, v := range st.Labels {
					labels[k] = v
				}
				for _, rc := range sc.RelabelConfigs {
					if (rc.Action != "" && rc.Action != "replace") || (rc.Regex != "" && rc.Regex != "(.*)") {
						t.Fatalf("%s: the test only applies the default replace action", sc.JobName)
					}
					vals := make([]string, len(rc.SourceLabels))
					for i, s := range rc.SourceLabels {
						vals[i] = labels[s]
					}
					v := strings.Join(vals, ";")
					if rc.Replacement != nil {
						v = strings.ReplaceAll(*rc.Replacement, "$1", v)
					}
					labels[rc.TargetLabel] = v
				}
				q := url.Values{}
				for k, vs := range sc.Params {
					q[k] = vs
				}
				for k, v := range labels {
					if p, ok := strings.CutPrefix(k, "__param_"); ok {
						q.Set(p, v)
					}
				}
				if labels["__address__"] != "127.0.0.1:9631" || labels["instance"] != tgt {
					t.Errorf("%s %s: scraped at %q as instance %q", sc.JobName, tgt, labels["__address__"], labels["instance"])
				}
				req, err := parseProbeRequest(q)
				if err != nil {
					t.Errorf("%s %s: the exporter refuses %s: %v", sc.JobName, tgt, q.Encode(), err)
					continue
				}
				m, ok := modules[req.module]
				if !ok {
					t.Errorf("%s: module %q is not in the example exporter configuration", sc.JobName, req.module)
					continue
				}
				entries := m.AllowedTargets
				if len(entries) == 0 {
					entries = defaultAllowTargets
				}
				allow, err := parseAllowList(entries, fakeResolver{})
				if err != nil {
					t.Fatalf("module %q: %v", req.module, err)
				}
				if u, _ := url.Parse(req.target); allow.check(context.Background(), u.Hostname()) != nil {
					t.Errorf("%s: %s is outside module %q's allowed_targets", sc.JobName, tgt, req.module)
				}
				if req.target != tgt {
					t.Errorf("%s: target %q, want %q", sc.JobName, req.target, tgt)
				}
				if !slices.Equal(req.printers, q["printer"]) {
					t.Errorf("%s %s: printers %q from %s", sc.JobName, tgt, req.printers, q.Encode())
				}
				probes++
			}
		}
	}
	if probes < 5 {
		t.Fatalf("only %d probes in the example", probes)
	}
}

// TestExampleExporterConfig: the example configuration passes every module rule, its plant
// module carries a token and its mtls module a client certificate, each with its own list.
func TestExampleExporterConfig(t *testing.T) {
	modules, err := loadConfigFile("../../examples/prometheus/labelprinter-exporter.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range modules {
		if err := m.check(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, kind := range map[string]string{"plant": "authorization", "mtls": "a client certificate"} {
		m := modules[name]
		if m == nil || !slices.Contains(m.credentials(), kind) || len(m.AllowedTargets) == 0 {
			t.Errorf("module %s: want %s and allowed_targets, got %+v", name, kind, m)
		}
	}
	if m := modules[defaultModuleName]; m == nil || len(m.credentials()) != 0 {
		t.Error("no default module without credentials")
	}
}

// TestExampleDashboard checks that every metric the example dashboard queries is one a probe
// answers, and that every state and level it maps is one the exporter writes.
func TestExampleDashboard(t *testing.T) {
	dash := readDashboard(t)
	sim := startSim(t, printersim.WithPrinters("line1"))
	h := newHarness(t, nil)
	mfs, body := h.probe("target=" + target(sim) + "&printer=line1")
	_, _, own := h.get("/metrics")

	// The bridge's panels read what labelprinter-mqtt writes: the names its collector describes.
	descs := make(chan *prometheus.Desc, 64)
	(&mqttbridge.Bridge{}).Collector().Describe(descs)
	close(descs)
	var bridgeDescs strings.Builder
	for d := range descs {
		bridgeDescs.WriteString(d.String())
	}
	bridge := regexp.MustCompile(`fqName: "(labelprinter_mqtt_[a-z_]+)"`)
	bridgeNames := map[string]bool{}
	for _, m := range bridge.FindAllStringSubmatch(bridgeDescs.String(), -1) {
		bridgeNames[m[1]] = true
	}
	if len(bridgeNames) == 0 {
		t.Fatal("no labelprinter_mqtt_ metric described by the bridge's collector")
	}

	names := regexp.MustCompile(`labelprinter_[a-z_]+`)
	enum := regexp.MustCompile(`(state|level)="([A-Z_]+)"`)
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	seen := map[string]bool{}
	for _, e := range exprs {
		for _, n := range names.FindAllString(e, -1) {
			seen[n] = true
			if strings.HasPrefix(n, "labelprinter_mqtt_") {
				if !bridgeNames[n] {
					t.Errorf("the dashboard queries %s, which labelprinter-mqtt does not write", n)
				}
				continue
			}
			if _, ok := mfs[n]; !ok && !strings.Contains(own, n) {
				t.Errorf("the dashboard queries %s, which the exporter does not write", n)
			}
		}
		for _, m := range enum.FindAllStringSubmatch(e, -1) {
			if !strings.Contains(body, m[0]) {
				t.Errorf("the dashboard maps %s, which the exporter does not write", m[0])
			}
		}
	}
	for _, want := range []string{"labelprinter_printed_labels_total", "labelprinter_trigger_bounces_total", "labelprinter_state", "labelprinter_up"} {
		if !seen[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}
