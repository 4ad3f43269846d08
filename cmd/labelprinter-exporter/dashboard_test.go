package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

// promtool returns the path of Prometheus's promtool, or skips the test when it is not
// installed. With LABELPRINTER_REQUIRE_PROMTOOL=1 (as .ci/run sets it) a missing promtool is a
// failure, so CI can never pass by skipping.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("LABELPRINTER_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed; .ci/run requires it")
	}
	return p
}

// TestExamplePrometheusConfigPromtool: promtool accepts the example Prometheus configuration.
func TestExamplePrometheusConfigPromtool(t *testing.T) {
	out, err := exec.Command(promtool(t), "check", "config", "../../examples/prometheus/prometheus.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// dashboardVars are the values the test gives the dashboard's variables: every probe job as
// Grafana expands "All" without an allValue (the values of label_values(labelprinter_up, job)
// as one regular expression), every controller, a 10-minute range, and the example's 15 s
// scrape interval.
var dashboardVars = []string{
	"$__range_s", "600", // before $__range, which it starts with
	"$__range", "10m",
	"$__rate_interval", "1m",
	"$scrape_interval", "15",
	"$job", "(labelprinter|labelprinter-lines)",
	"$instance", ".+",
}

// dashboard is what the tests read of the example Grafana dashboard.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
			AllValue   string `json:"allValue"`
		} `json:"list"`
	} `json:"templating"`
}

// readDashboard reads examples/prometheus/grafana-dashboard.json.
func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("../../examples/prometheus/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash dashboard
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	return dash
}

// dashboardQueries returns each panel's expression by title, and each query variable's as
// PromQL, with the variables filled in.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	dash := readDashboard(t)
	fill := strings.NewReplacer(dashboardVars...)
	q := map[string]string{}
	for _, p := range dash.Panels {
		if len(p.Targets) != 1 {
			t.Fatalf("panel %q has %d queries; the test knows answers for one", p.Title, len(p.Targets))
		}
		q[p.Title] = fill.Replace(p.Targets[0].Expr)
	}
	labelValues := regexp.MustCompile(`^label_values\((.*), (\w+)\)$`)
	for _, v := range dash.Templating.List {
		if v.Definition == "" {
			continue
		}
		if v.Name == "job" && v.AllValue != "" {
			// "All" as .+ would match every job of the server, and the panels read up.
			t.Fatalf("variable job has allValue %q; the panels need All to be the list of probe jobs", v.AllValue)
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Fatalf("variable %s: %q is not label_values(query, label)", v.Name, v.Definition)
		}
		q["variable "+v.Name] = fill.Replace(fmt.Sprintf("group by (%s) (%s)", m[2], m[1]))
	}
	for name, e := range q {
		if strings.Contains(e, "$") {
			t.Fatalf("%s: a variable the test does not fill: %s", name, e)
		}
	}
	return q
}

// dashboardCase is one promtool test: series every 15 s from 0 to 10 min, and the answer each
// named query must give at an evaluation time.
type dashboardCase struct {
	name   string
	series string // promtool input_series, YAML
	evals  []dashboardEval
}

type dashboardEval struct {
	query string // a panel title or "variable <name>"
	at    string // eval_time
	want  []string
}

// The scenarios. Series are sampled every 15 s; index i is at i*15 s, and 10m is index 40.
//
// "plant", evaluated at 10m over the 10 min range:
//   - http://a (job labelprinter, single-printer paths) is up throughout; it printed 1 label a
//     scrape (40 in the window, 4 a minute), bounced 1 a scrape, and was in ERROR for exactly
//     two samples (150 s and 165 s): 30 s observed, 0.5 min; 2 active errors; ink 0 LOW.
//   - http://b (job labelprinter-lines, line1 and line2) was first scraped at 9 min (index 36),
//     and was in ERROR for two of its five samples: again 0.5 min. (The old panel, average times
//     range, said 4 min.) line1 printed 20 labels a minute from 100 at 9 min: increase over the
//     range extrapolates half an interval before its first sample: 20 * 67.5/60 = 22.5.
//   - http://c (job labelprinter) answers the scrape but its probe fails from 9m15s: its counter
//     went stale, labelprinter_up is 0. One printer down.
//   - http://d (job labelprinter) was never scraped successfully (up 0): a scrape failing, and
//     a controller down with no printer known.
//   - a job of another exporter on the same server fails its scrapes; it is none of the
//     dashboard's business.
const plantSeries = `
      - series: 'up{job="labelprinter", instance="http://a"}'
        values: '1x40'
      - series: 'labelprinter_up{job="labelprinter", instance="http://a"}'
        values: '1x40'
      - series: 'labelprinter_printed_labels_total{job="labelprinter", instance="http://a", printer=""}'
        values: '0+1x40'
      - series: 'labelprinter_trigger_bounces_total{job="labelprinter", instance="http://a", printer=""}'
        values: '0+1x40'
      - series: 'labelprinter_state{job="labelprinter", instance="http://a", state="ERROR"}'
        values: '0x9 1 1 0x28'
      - series: 'labelprinter_state{job="labelprinter", instance="http://a", state="STARTED"}'
        values: '1x9 0 0 1x28'
      - series: 'labelprinter_errors{job="labelprinter", instance="http://a"}'
        values: '0x38 2 2'
      - series: 'labelprinter_ink_level{job="labelprinter", instance="http://a", ink="0", level="EMPTY"}'
        values: '0x40'
      - series: 'labelprinter_ink_level{job="labelprinter", instance="http://a", ink="0", level="LOW"}'
        values: '1x40'
      - series: 'labelprinter_ink_level{job="labelprinter", instance="http://a", ink="0", level="OK"}'
        values: '0x40'
      - series: 'up{job="labelprinter-lines", instance="http://b"}'
        values: '_x36 1x4'
      - series: 'labelprinter_up{job="labelprinter-lines", instance="http://b"}'
        values: '_x36 1x4'
      - series: 'labelprinter_printed_labels_total{job="labelprinter-lines", instance="http://b", printer="line1"}'
        values: '_x36 100+5x4'
      - series: 'labelprinter_printed_labels_total{job="labelprinter-lines", instance="http://b", printer="line2"}'
        values: '_x36 7x4'
      - series: 'labelprinter_state{job="labelprinter-lines", instance="http://b", state="ERROR"}'
        values: '_x36 0 1 1 0 0'
      - series: 'labelprinter_state{job="labelprinter-lines", instance="http://b", state="STARTED"}'
        values: '_x36 1 0 0 1 1'
      - series: 'up{job="labelprinter", instance="http://c"}'
        values: '1x40'
      - series: 'labelprinter_up{job="labelprinter", instance="http://c"}'
        values: '1x36 0x3'
      - series: 'labelprinter_printed_labels_total{job="labelprinter", instance="http://c", printer=""}'
        values: '0x36 stale'
      - series: 'up{job="labelprinter", instance="http://d"}'
        values: '0x40'
      - series: 'up{job="node", instance="10.0.0.9:9100"}'
        values: '0x40'
`

// "dead exporter": both controllers were fine until 5 min, when the exporter died: every scrape
// since failed (up 0) and Prometheus marked the probes' series stale.
const deadExporterSeries = `
      - series: 'up{job="labelprinter", instance="http://a"}'
        values: '1x20 0x20'
      - series: 'up{job="labelprinter-lines", instance="http://b"}'
        values: '1x20 0x20'
      - series: 'labelprinter_up{job="labelprinter", instance="http://a"}'
        values: '1x20 stale'
      - series: 'labelprinter_up{job="labelprinter-lines", instance="http://b"}'
        values: '1x20 stale'
      - series: 'labelprinter_printed_labels_total{job="labelprinter", instance="http://a", printer=""}'
        values: '0+1x20 stale'
      - series: 'labelprinter_printed_labels_total{job="labelprinter-lines", instance="http://b", printer="line1"}'
        values: '0+1x20 stale'
      - series: 'labelprinter_printed_labels_total{job="labelprinter-lines", instance="http://b", printer="line2"}'
        values: '0+1x20 stale'
      - series: 'labelprinter_state{job="labelprinter", instance="http://a", state="STARTED"}'
        values: '1x20 stale'
`

// "one controller, two printers": line1 and line2 behind one probe are two printers.
const twoPrintersSeries = `
      - series: 'up{job="labelprinter-lines", instance="http://b"}'
        values: '1x40'
      - series: 'labelprinter_up{job="labelprinter-lines", instance="http://b"}'
        values: '1x40'
      - series: 'labelprinter_printed_labels_total{job="labelprinter-lines", instance="http://b", printer="line1"}'
        values: '0+1x40'
      - series: 'labelprinter_printed_labels_total{job="labelprinter-lines", instance="http://b", printer="line2"}'
        values: '0+2x40'
`

// "bridges": a pair of labelprinter-mqtt bridges (job labelprinter-mqtt), both scraped from
// 5 min (index 20): a is active and connected, its lease renewed 2.5 s ago, two of its
// commands unknown and 30 sent, printer line1 reachable and line2 not, and 2 printJobs a scrape
// (8 a minute) each answered queued and sent; b stands by (not active, not connected, no
// printers or outbox of its own). Evaluated at 4 min, before either was scraped, there is no
// bridge: none ready, nothing unknown or unreachable, no lease.
const bridgesSeries = `
      - series: 'labelprinter_mqtt_active{job="labelprinter-mqtt", instance="a:9632"}'
        values: '_x20 1x20'
      - series: 'labelprinter_mqtt_broker_connected{job="labelprinter-mqtt", instance="a:9632"}'
        values: '_x20 1x20'
      - series: 'labelprinter_mqtt_active{job="labelprinter-mqtt", instance="b:9632"}'
        values: '_x20 0x20'
      - series: 'labelprinter_mqtt_broker_connected{job="labelprinter-mqtt", instance="b:9632"}'
        values: '_x20 0x20'
      - series: 'labelprinter_mqtt_lease_held{job="labelprinter-mqtt", instance="b:9632"}'
        values: '_x20 0x20'
      - series: 'labelprinter_mqtt_lease_held{job="labelprinter-mqtt", instance="a:9632"}'
        values: '_x20 1x20'
      - series: 'labelprinter_mqtt_lease_renewal_age_seconds{job="labelprinter-mqtt", instance="a:9632"}'
        values: '_x20 2.5x20'
      - series: 'labelprinter_mqtt_outbox_entries{job="labelprinter-mqtt", instance="a:9632", printer="line1", state="unknown"}'
        values: '_x20 2x20'
      - series: 'labelprinter_mqtt_outbox_entries{job="labelprinter-mqtt", instance="a:9632", printer="line1", state="sent"}'
        values: '_x20 30x20'
      - series: 'labelprinter_mqtt_printer_reachable{job="labelprinter-mqtt", instance="a:9632", printer="line1"}'
        values: '_x20 1x20'
      - series: 'labelprinter_mqtt_printer_reachable{job="labelprinter-mqtt", instance="a:9632", printer="line2"}'
        values: '_x20 0x20'
      - series: 'labelprinter_mqtt_command_results_total{job="labelprinter-mqtt", instance="a:9632", command="printJob", state="queued"}'
        values: '_x20 0+2x20'
      - series: 'labelprinter_mqtt_command_results_total{job="labelprinter-mqtt", instance="a:9632", command="printJob", state="sent"}'
        values: '_x20 0+2x20'
`

var dashboardCases = []dashboardCase{
	{"bridges", bridgesSeries, []dashboardEval{
		{"Bridges ready", "10m", []string{`{} 1`}},
		{"Bridges ready", "4m", []string{`{} 0`}},
		{"Bridge commands unknown", "10m", []string{`{} 2`}},
		{"Bridge commands unknown", "4m", []string{`{} 0`}},
		{"Bridge printers unreachable", "10m", []string{`{} 1`}},
		{"Bridge printers unreachable", "4m", []string{`{} 0`}},
		{"Bridge lease renewal age", "10m", []string{`{} 2.5`}},
		{"Bridge results per minute", "10m", []string{`{command="printJob", state="queued"} 8`, `{command="printJob", state="sent"} 8`}},
	}},
	{"plant", plantSeries, []dashboardEval{
		{"Printers up", "10m", []string{`{} 3`}},
		{"Printers down", "10m", []string{`{} 2`}},
		{"Scrapes failing", "10m", []string{`{} 1`}},
		{"Labels printed", "10m", []string{`{} 63`}}, // increase() gives 62.5: whole labels are shown
		{"Bounces (unlabelled products)", "10m", []string{`{} 40`}},
		{"Labels per minute", "10m", []string{
			`{instance="http://a"} 4`, `{instance="http://b", printer="line1"} 20`, `{instance="http://b", printer="line2"} 0`}},
		{"Bounces per 5 minutes", "10m", []string{`{instance="http://a"} 20`}},
		{"State", "10m", []string{`{instance="http://a"} 6`, `{instance="http://b"} 6`}},
		{"State", "2m45s", []string{`{instance="http://a"} 9`}},
		{"Up", "10m", []string{
			`{job="labelprinter", instance="http://a"} 1`, `{job="labelprinter-lines", instance="http://b"} 1`,
			`{job="labelprinter", instance="http://c"} 0`, `{job="labelprinter", instance="http://d"} 0`}},
		{"Minutes in ERROR", "10m", []string{`{instance="http://a"} 0.5`, `{instance="http://b"} 0.5`}},
		{"Active errors", "10m", []string{`labelprinter_errors{job="labelprinter", instance="http://a"} 2`}},
		{"Ink level", "10m", []string{`{instance="http://a", ink="0"} 2`}},
		{"variable job", "10m", []string{`{job="labelprinter"} 1`, `{job="labelprinter-lines"} 1`}},
		{"variable instance", "10m", []string{`{instance="http://a"} 1`, `{instance="http://b"} 1`, `{instance="http://c"} 1`}},
	}},
	{"dead exporter", deadExporterSeries, []dashboardEval{
		{"Printers up", "10m", []string{`{} 0`}},
		{"Printers down", "10m", []string{`{} 3`}},
		{"Scrapes failing", "10m", []string{`{} 2`}},
		{"Up", "10m", []string{`{job="labelprinter", instance="http://a"} 0`, `{job="labelprinter-lines", instance="http://b"} 0`}},
		{"State", "10m", nil},
		{"Labels per minute", "10m", nil},
	}},
	{"one controller, two printers", twoPrintersSeries, []dashboardEval{
		{"Printers up", "10m", []string{`{} 2`}},
		{"Printers down", "10m", []string{`{} 0`}},
		{"Labels printed", "10m", []string{`{} 120`}},
	}},
}

// TestDashboardQueries evaluates every panel expression of the example dashboard (and its
// variables' queries) with Prometheus's own PromQL engine, through promtool test rules, against
// synthetic series whose answers are worked out by hand above.
func TestDashboardQueries(t *testing.T) {
	bin := promtool(t)
	queries := dashboardQueries(t)
	covered := map[string]bool{}
	var b strings.Builder
	b.WriteString("rule_files: []\nevaluation_interval: 15s\ntests:\n")
	for _, c := range dashboardCases {
		fmt.Fprintf(&b, "  - name: %q\n    interval: 15s\n    input_series:%s    promql_expr_test:\n", c.name, c.series)
		for _, ev := range c.evals {
			expr, ok := queries[ev.query]
			if !ok {
				t.Fatalf("%s: the dashboard has no %q", c.name, ev.query)
			}
			covered[ev.query] = true
			fmt.Fprintf(&b, "      - expr: %q\n        eval_time: %s\n        exp_samples:\n", expr, ev.at)
			for _, w := range ev.want {
				i := strings.LastIndex(w, "} ")
				fmt.Fprintf(&b, "          - labels: %q\n            value: %s\n", w[:i+1], w[i+2:])
			}
		}
	}
	var missing []string
	for q := range queries {
		if !covered[q] {
			missing = append(missing, q)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("no known answer for %q: every panel needs one", missing)
	}
	file := filepath.Join(t.TempDir(), "dashboard_test.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s\n--- the test file:\n%s", err, out, b.String())
	}
}

// TestDashboardBridgeJob: the dashboard's bridge panels read the job the example Prometheus
// configuration scrapes labelprinter-mqtt under, at the port its README suggests.
func TestDashboardBridgeJob(t *testing.T) {
	b, err := os.ReadFile("../../examples/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg promConfig
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName == "labelprinter-mqtt" {
			for _, st := range sc.StaticConfigs {
				targets = append(targets, st.Targets...)
			}
		}
	}
	if len(targets) == 0 || !strings.HasSuffix(targets[0], ":9632") {
		t.Errorf("prometheus.yml: job labelprinter-mqtt scrapes %v, want a target on :9632", targets)
	}
	readme, err := os.ReadFile("../labelprinter-mqtt/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "--web.listen-address :9632") {
		t.Error("the labelprinter-mqtt README does not suggest --web.listen-address :9632")
	}
	for _, p := range readDashboard(t).Panels {
		for _, tg := range p.Targets {
			if strings.Contains(tg.Expr, "labelprinter_mqtt_") && !strings.Contains(tg.Expr, `job="labelprinter-mqtt"`) {
				t.Errorf("panel %q reads the bridge's metrics outside job labelprinter-mqtt: %s", p.Title, tg.Expr)
			}
		}
	}
}
