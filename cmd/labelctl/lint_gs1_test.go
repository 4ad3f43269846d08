package main

import (
	"context"
	"strings"
	"testing"
)

// TestLabelsLintGS1: lint prints the GS1 problems of apps and of a -Plain string, each by its
// path and naming the AI, and exits 1; put --check sends nothing then.
func TestLabelsLintGS1(t *testing.T) {
	ctx := context.Background()
	file := writeFile(t, "gs1.json", []byte(`{"format":3,"width":50,"height":30,"objs":[`+
		`{"type":"GS1-128","barWidth":0.508,"barHeight":32,"apps":[{"id":"00","value":"106141411234567897"},{"id":"02","value":"09501101530003"}]},`+
		`{"type":"GS1-DataMatrix-Plain","moduleSize":0.8,"text":"0109501101530003\u001d17261232"}]}`))
	r := cli(t, ctx, nil, "", "labels", "lint", file)
	want := "objs[0].apps[1]: AI (02) must not appear with AI (01) (objs[1].text element 0)\n" +
		"objs[0].apps[1]: AI (02) needs AI (37)\n" +
		`objs[1].text: element 1: AI (17): day 32 does not exist in 2026-12 (in "261232")` + "\n"
	if r.code != 1 || r.stdout != want {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %q", r.code, r.stdout, want, r.stderr)
	}
	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	if r := cli(t, ctx, env, "", "labels", "put", "GS1", file, "--check"); r.code == 0 || r.stdout != want {
		t.Errorf("put --check: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, ctx, env, "", "labels", "get", "GS1"); r.code == 0 {
		t.Errorf("put --check sent a label with GS1 problems: %q", r.stdout)
	} else if !strings.Contains(r.stderr, "404") {
		t.Errorf("get: %q", r.stderr)
	}
}
