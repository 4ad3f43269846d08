package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
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

	if r := cli(t, ctx, env, "", "outbox", "resend", "order-1"); r.code != 1 || r.stderr != "labelctl: cannot resend entry \"order-1\": it is sent; only unknown entries can be resent\n" {
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
	if r := cli(t, ctx, env, "", "outbox", "get", "nope"); r.code != 1 || r.stderr != "labelctl: no entry \"nope\" in "+db+" (see 'labelctl outbox list')\n" {
		t.Errorf("get of a missing entry: exit %d, %q", r.code, r.stderr)
	}
}

// TestOutboxMissingFile: a --db that does not exist is a typo for every command but enqueue:
// exit 1, a message naming the file and saying enqueue creates it, and no file made.
func TestOutboxMissingFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	typo := filepath.Join(dir, "lin1.outbox")
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_PRINTER": "line1"}
	for _, args := range [][]string{
		{"list"}, {"list", "--state", "unknown"}, {"get", "order-1"}, {"cancel", "order-1"},
		{"resend", "order-1"}, {"prune"}, {"run"}, {"run", "--drain"},
	} {
		r := cli(t, ctx, env, "", append([]string{"outbox", "--db", typo}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, typo+" does not exist") || !strings.Contains(r.stderr, "enqueue") || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(typo); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%q created the file: %v", args, err)
		}
	}
	// enqueue creates it.
	cli(t, ctx, env, "", "outbox", "--db", typo, "enqueue", "--id", "a", "--label", "L").ok(t)
	if r := cli(t, ctx, env, "", "outbox", "--db", typo, "list"); r.code != 0 || !strings.Contains(r.stdout, "a ") {
		t.Errorf("list after enqueue: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestOutboxDrain: run --drain sends what is due, waits, prints a line per state and exits 0
// when all went out, 1 when something is left pending or became unknown or rejected.
func TestOutboxDrain(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "line1.outbox")
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": db}
	c := func(args ...string) result { t.Helper(); return cli(t, ctx, env, "", args...).ok(t) }
	cli(t, ctx, env, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)
	c("outbox", "enqueue", "--id", "order-1", "--label", "MEDIUM", "--queue")
	c("outbox", "enqueue", "--id", "order-2", "--label", "MEDIUM", "--queue", "--printer", "line2")
	r := c("outbox", "run", "--drain")
	out := normalize(strings.ReplaceAll(r.stdout, db, "line1.outbox"))
	for _, want := range []string{
		"delivering line1.outbox to http://ADDR/api/v3; until nothing is due\n",
		"HH:MM:SS order-1 sent printer=line1 attempts=1\n",
		"HH:MM:SS order-2 sent printer=line2 attempts=1\n",
		"sent      2  by this run\n",
		"rejected  0  by this run\n",
		"unknown   0  by this run: check the printer, then resend or cancel\n",
		"expired   0  by this run\n",
		"pending   0  left for the next run\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("drain output lacks %q:\n%s", want, out)
		}
	}
	if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 2 {
		t.Errorf("%d print jobs", n)
	}
	// Nothing left: a second drain sends nothing and exits 0.
	if r := c("outbox", "run", "--drain"); !strings.Contains(r.stdout, "sent      0") {
		t.Errorf("second drain:\n%s", r.stdout)
	}

	// A rejected one, an unknown one, and one left pending behind a printer that is away.
	srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Reset: printersim.ResetAfterRead})
	c("outbox", "enqueue", "--id", "order-3", "--label", "MEDIUM", "--queue")
	c("outbox", "enqueue", "--id", "order-4", "--label", "NONE", "--queue")
	c("outbox", "enqueue", "--id", "order-5", "--label", "MEDIUM", "--queue")
	r = cli(t, ctx, env, "", "outbox", "run", "--drain")
	if r.code != 1 || !strings.Contains(r.stderr, "outbox not drained cleanly: 1 unknown, 1 rejected") {
		t.Errorf("drain with failures: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	for _, want := range []string{"sent      1  by this run\n", "rejected  1  by this run: order-4\n", "unknown   1  by this run: check the printer, then resend or cancel: order-3\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("drain output lacks %q:\n%s", want, r.stdout)
		}
	}
	// The printer is away: the entry stays pending, and the line says one attempts count.
	off := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": db}
	cli(t, ctx, off, "", "outbox", "enqueue", "--id", "order-6", "--label", "MEDIUM").ok(t)
	cli(t, ctx, off, "", "outbox", "enqueue", "--id", "order-7", "--label", "MEDIUM").ok(t)
	r = cli(t, ctx, off, "", "outbox", "run", "--drain")
	if r.code != 1 || !strings.Contains(r.stderr, "2 pending") || !strings.Contains(r.stdout, "pending   2  left for the next run: order-6 order-7\n") {
		t.Errorf("drain with the printer away: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	if !strings.Contains(r.stdout, "order-6 pending printer=line1 attempts=1 error=") || strings.Contains(r.stdout, "attempts)") {
		t.Errorf("one attempts count per line:\n%s", r.stdout)
	}
	if j := cli(t, ctx, off, "", "-o", "json", "outbox", "run", "--drain"); j.code != 1 || !strings.Contains(j.stdout, `"pending": [`) {
		t.Errorf("-o json drain: exit %d\n%s", j.code, j.stdout)
	}
}
