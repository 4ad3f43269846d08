package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

const (
	goodLabel = `{"format":3,"width":50,"height":30,"objs":[{"type":"EAN-13","x":1,"y":1,"text":"9501101530003","barWidth":0.33,"barHeight":24}]}`
	badLabel  = `{"format":3,"width":50,"height":30,"objs":[{"type":"EAN-13","x":1,"y":1,"text":"9501101530004","barWidth":0.33},` +
		`{"type":"ObjectGroup","children":[{"type":"DataMatrix","text":"x","moduleSize":0}]}]}`
)

// TestLabelsLint: problems on stdout one a line and exit 1; a clean label exits 0 silently; a
// missing file without a printer is a usage error; with --url a name is read from the printer.
func TestLabelsLint(t *testing.T) {
	ctx := context.Background()
	good := writeFile(t, "good.json", []byte(goodLabel))
	bad := writeFile(t, "bad.json", []byte(badLabel))

	r := cli(t, ctx, nil, "", "labels", "lint", good).ok(t)
	if r.stdout != "" {
		t.Errorf("clean label printed %q", r.stdout)
	}
	r = cli(t, ctx, nil, "", "labels", "lint", bad)
	want := "objs[0].barHeight: is mandatory\n" +
		"objs[0].text: check digit is 4, must be 3\n" +
		"objs[1].children[0].moduleSize: must be greater than 0\n"
	if r.code != 1 || r.stdout != want || r.stderr != "labelctl: "+bad+" has 3 problems\n" {
		t.Errorf("bad label: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = cli(t, ctx, nil, "", "-o", "json", "labels", "lint", bad)
	var ps []struct{ Path, Msg string }
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil || r.code != 1 || len(ps) != 3 || ps[2].Path != "objs[1].children[0].moduleSize" {
		t.Errorf("-o json: exit %d, %v, %q", r.code, err, r.stdout)
	}
	if r := cli(t, ctx, nil, "[1]", "labels", "lint", "-"); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "not a JSON object") {
		t.Errorf("not a label: exit %d, %q", r.code, r.stdout)
	}
	if r := cli(t, ctx, nil, "", "labels", "lint", "/no/such/label.json"); r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "labelctl: ") {
		t.Errorf("missing file without --url: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}

	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	cli(t, ctx, env, badLabel, "labels", "put", "BAD", "-").ok(t)
	if r := cli(t, ctx, env, "", "labels", "lint", "BAD"); r.code != 1 || r.stdout != want {
		t.Errorf("lint NAME: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, ctx, env, "", "labels", "lint", good); r.code != 0 {
		t.Errorf("a file wins over a name with --url: exit %d %q", r.code, r.stderr)
	}
	if r := cli(t, ctx, env, "", "labels", "lint", "NOPE"); r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Errorf("unknown name: exit %d, %q", r.code, r.stderr)
	}
}

// TestLabelsPutCheck: put --check sends a clean label and sends nothing for a label with
// problems; without --check the label is sent as before.
func TestLabelsPutCheck(t *testing.T) {
	ctx := context.Background()
	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	r := cli(t, ctx, env, badLabel, "labels", "put", "BAD", "-", "--check")
	if r.code != 1 || !strings.Contains(r.stdout, "objs[0].barHeight: is mandatory") || srv.Sim.Requests("PUT", "/api/v3/labels/{name}") != 0 {
		t.Errorf("--check with problems: exit %d, %q, %q, %d PUTs", r.code, r.stdout, r.stderr, srv.Sim.Requests("PUT", "/api/v3/labels/{name}"))
	}
	if _, ok := srv.Sim.Label("BAD"); ok {
		t.Error("a label with problems was stored")
	}
	cli(t, ctx, env, goodLabel, "labels", "put", "GOOD", "-", "--check").ok(t)
	cli(t, ctx, env, badLabel, "labels", "put", "BAD", "-").ok(t)
	if _, ok := srv.Sim.Label("BAD"); !ok {
		t.Error("put without --check did not store the label")
	}
	if r := cli(t, ctx, env, "", "tables", "put", "T", "-", "--check"); r.code != 2 {
		t.Errorf("tables put has no --check: exit %d", r.code)
	}
}

// TestLabelsLintWarnings: the GS1 symbol rules are warnings, printed as "warning: PATH:
// MESSAGE" after the problems (with "warning": true in JSON); lint exits 0 on them, 1 with
// --strict; put --check sends a label that has only warnings.
func TestLabelsLintWarnings(t *testing.T) {
	ctx := context.Background()
	file := writeFile(t, "warn.json", []byte(`{"format":3,"width":150,"height":100,"objs":[`+
		`{"type":"GS1-128","x":10,"y":10,"barWidth":0.508,"barHeight":25,"apps":[["00","106141411234567897"]]}]}`))
	want := "warning: objs[0].barHeight: bar height 24.977 mm is under 31.750 mm, the least GS1 symbol specification table 5 allows for GS1-128 on a logistic unit, AI (00) on the label\n"
	if r := cli(t, ctx, nil, "", "labels", "lint", file); r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("lint: exit %d\nstdout %q\nwant   %q\nstderr %q", r.code, r.stdout, want, r.stderr)
	}
	if r := cli(t, ctx, nil, "", "labels", "lint", "--strict", file); r.code != 1 || r.stdout != want || r.stderr != "labelctl: "+file+" has 1 warning (--strict)\n" {
		t.Errorf("lint --strict: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r := cli(t, ctx, nil, "", "-o", "json", "labels", "lint", file)
	var ps []struct {
		Path, Msg string
		Warning   bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil || r.code != 0 || len(ps) != 1 || !ps[0].Warning || ps[0].Path != "objs[0].barHeight" {
		t.Errorf("-o json: exit %d, %v, %q", r.code, err, r.stdout)
	}
	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	cli(t, ctx, env, "", "labels", "put", "WARN", file, "--check").ok(t)
	cli(t, ctx, env, "", "labels", "get", "WARN").ok(t)
}
