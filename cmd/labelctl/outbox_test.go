package main

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// normalize replaces what changes from run to run (times of day, timestamps) with fixed text.
func normalize(s string) string {
	s = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d `).ReplaceAllString(s, "HH:MM:SS ")
	s = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+Z"`).ReplaceAllString(s, `"TIME"`)
	return regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(s, "ADDR")
}

// outboxRun runs "outbox run" until the printer has received want print jobs in all, then
// stops it as Ctrl-C would, and returns its output.
func outboxRun(t *testing.T, srv *printersim.Server, env map[string]string, want int) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- cli(t, ctx, env, "", "outbox", "run", "--retry", "10ms") }()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob") < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	r := (<-done).ok(t)
	// Printers are delivered in parallel: sort the change lines between the first and last.
	out := strings.ReplaceAll(r.stdout, env["LABELPRINTER_OUTBOX"], "line1.outbox")
	lines := strings.Split(strings.TrimSuffix(normalize(out), "\n"), "\n")
	if len(lines) > 2 {
		slices.Sort(lines[1 : len(lines)-1])
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestOutboxCommands(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	env := map[string]string{
		"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1",
		"LABELPRINTER_OUTBOX": filepath.Join(t.TempDir(), "line1.outbox"),
	}
	c := func(args ...string) result { t.Helper(); return cli(t, ctx, env, "", args...).ok(t) }
	cli(t, ctx, env, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)

	golden(t, "outbox-enqueue", c("outbox", "enqueue", "--id", "order-1", "--label", "MEDIUM", "--copies", "2", "--queue").stdout+
		c("outbox", "enqueue", "--id", "order-1", "--label", "OTHER").stdout+
		c("outbox", "enqueue", "--id", "order-2", "--label", "SMALL").stdout+
		c("outbox", "enqueue", "--id", "order-3", "--label", "MEDIUM", "--queue", "--printer", "line2").stdout)
	golden(t, "outbox-list-pending", c("outbox", "list").stdout)
	golden(t, "outbox-run", outboxRun(t, srv, env, 3))

	// The printer acts on order-4 but its answer is lost: unknown, until a person decides.
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Reset: printersim.ResetAfterRead})
	c("outbox", "enqueue", "--id", "order-4", "--label", "MEDIUM", "--queue")
	c("outbox", "enqueue", "--id", "order-5", "--label", "MEDIUM", "--queue", "--expire-after", "1h")
	c("outbox", "cancel", "order-5")
	run := outboxRun(t, srv, env, 4)
	if !strings.Contains(run, "HH:MM:SS order-4 unknown printer=line1 attempts=1 error=POST /api/v3/printers/line1/printJob: ") {
		t.Errorf("run with a lost answer:\n%s", run)
	}
	golden(t, "outbox-list", normalize(c("outbox", "list").stdout))
	golden(t, "outbox-list-unknown", normalize(c("outbox", "list", "--state", "unknown").stdout))
	golden(t, "outbox-get", normalize(c("outbox", "get", "order-1").stdout))

	if r := cli(t, ctx, env, "", "outbox", "resend", "order-1"); r.code != 1 || !strings.Contains(r.stderr, `"order-1" is sent; only unknown entries can be resent`) {
		t.Errorf("resend of a sent entry: exit %d, %q", r.code, r.stderr)
	}
	golden(t, "outbox-resend", c("outbox", "resend", "order-4").stdout)
	if run := outboxRun(t, srv, env, 5); !strings.Contains(run, "HH:MM:SS order-4 sent printer=line1 attempts=2\n") {
		t.Errorf("run after resend:\n%s", run)
	}
	if j := c("-o", "json", "outbox", "list", "--state", "sent").stdout; strings.Count(j, `"state": "sent"`) != 3 {
		t.Errorf("list -o json:\n%s", j)
	}
	if r := c("outbox", "prune", "--older-than", "0s"); r.stdout != "removed 5 entries\n" {
		t.Errorf("prune: %q", r.stdout)
	}
	golden(t, "outbox-list-pruned", c("outbox", "list").stdout)
}

func TestOutboxUsageErrors(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "x.outbox")
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_OUTBOX": db}
	for _, args := range [][]string{
		{"outbox", "enqueue", "--id", "a"},
		{"outbox", "enqueue", "--id", "a\x01", "--label", "L"},
		{"outbox", "enqueue", "--label", "L", "--printer", ".."},
		{"outbox", "list", "--state", "lost"},
		{"outbox", "get"},
		{"outbox", "prune", "--older-than", "-1h"},
		{"outbox", "run", "--retry", "0s"},
	} {
		if r := cli(t, ctx, env, "", args...); r.code != 2 || !strings.HasPrefix(r.stderr, "labelctl: ") {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := cli(t, ctx, map[string]string{}, "", "outbox", "list"); r.code != 2 || !strings.Contains(r.stderr, "--db") {
		t.Errorf("no --db: exit %d, %q", r.code, r.stderr)
	}
	if r := cli(t, ctx, env, "", "outbox", "get", "nope"); r.code != 1 || !strings.Contains(r.stderr, "no such entry") {
		t.Errorf("get of a missing entry: exit %d, %q", r.code, r.stderr)
	}
}
