package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestOutboxPostgres: every outbox command works on a queue in PostgreSQL, and enqueue and
// list work while a run delivers from the same queue, which a file does not allow.
func TestOutboxPostgres(t *testing.T) {
	dsn := pgtest.WithParam(pgtest.DSN(t), "password", "Sekr1t-pw")
	srv := startSim(t)
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": dsn}
	c := func(args ...string) result { t.Helper(); return cli(t, ctx, env, "", args...).ok(t) }
	cli(t, ctx, env, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)

	if r := c("outbox", "enqueue", "--create", "--id", "order-1", "--label", "MEDIUM", "--queue"); r.stdout != "enqueued order-1 for line1\n" {
		t.Errorf("enqueue: %q", r.stdout)
	}
	if r := c("outbox", "enqueue", "--id", "order-1", "--label", "OTHER"); r.stdout != "order-1 is already in the outbox (pending); nothing added\n" {
		t.Errorf("enqueue again: %q", r.stdout)
	}
	// Another queue of the same database knows nothing of it.
	c("outbox", "--queue-name", "line2", "enqueue", "--create", "--id", "l2-1", "--label", "MEDIUM", "--expire-after", "1ms")
	if r := c("outbox", "--queue-name", "line2", "list"); strings.Contains(r.stdout, "order-1") {
		t.Errorf("queue line2 lists queue default's entry:\n%s", r.stdout)
	}

	// A run delivers while enqueue and list go on beside it.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan result, 1)
	go func() { done <- cli(t, runCtx, env, "", "outbox", "run", "--retry", "10ms") }()
	for i, id := range []string{"order-2", "order-3"} {
		time.Sleep(50 * time.Millisecond)
		c("outbox", "enqueue", "--id", id, "--label", "MEDIUM", "--queue")
		if r := c("outbox", "list"); !strings.Contains(r.stdout, id) {
			t.Errorf("list %d during run:\n%s", i, r.stdout)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the last outcome's commit
	stop()
	run := (<-done).ok(t)
	if !strings.Contains(run.stdout, `delivering queue "default" of postgres://postgres@127.0.0.1:`) ||
		!strings.Contains(run.stdout, "order-3 sent printer=line1 attempts=1") {
		t.Errorf("run:\n%s", run.stdout)
	}
	list := c("outbox", "list", "--state", "sent").stdout
	for _, id := range []string{"order-1", "order-2", "order-3"} {
		if !strings.Contains(list, id) {
			t.Errorf("%s not sent:\n%s", id, list)
		}
	}
	if r := c("outbox", "get", "order-2"); !strings.Contains(r.stdout, `"state": "sent"`) {
		t.Errorf("get: %s", r.stdout)
	}
	c("outbox", "enqueue", "--id", "order-4", "--label", "MEDIUM", "--expire-after", "1h")
	if r := c("outbox", "cancel", "order-4"); !strings.Contains(r.stdout, "cancelled order-4") {
		t.Errorf("cancel: %q", r.stdout)
	}
	if r := cli(t, ctx, env, "", "outbox", "resend", "order-1"); r.code != 1 || !strings.Contains(r.stderr, "only unknown entries can be resent") {
		t.Errorf("resend of a sent entry: exit %d, %q", r.code, r.stderr)
	}
	// A refusal names the queue and the database, never the password.
	if r := cli(t, ctx, env, "", "outbox", "get", "no-such-order"); r.code != 1 ||
		!strings.Contains(r.stderr, `no entry "no-such-order" in queue "default" of postgres://`) || strings.Contains(r.stderr, "Sekr1t-pw") {
		t.Errorf("get of a missing entry: exit %d, %q", r.code, r.stderr)
	}
	if r := c("outbox", "run", "--drain"); !strings.Contains(r.stdout, "sent      0  by this run") {
		t.Errorf("drain:\n%s", r.stdout)
	}
	if r := c("outbox", "prune", "--older-than", "0s"); r.stdout != "removed 4 entries\n" {
		t.Errorf("prune: %q", r.stdout)
	}
	all := strings.Join([]string{run.stdout, run.stderr, list}, "")
	if strings.Contains(all, "Sekr1t-pw") {
		t.Errorf("the password was printed:\n%s", all)
	}
}

// TestOutboxQueueNameWithFile: --queue-name names a queue in PostgreSQL; with a file it is a
// usage error.
func TestOutboxQueueNameWithFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.outbox")
	r := cli(t, context.Background(), map[string]string{"LABELPRINTER_OUTBOX": db}, "", "outbox", "--queue-name", "a", "list")
	if r.code != 2 || !strings.Contains(r.stderr, "--queue-name") {
		t.Errorf("exit %d, %q", r.code, r.stderr)
	}
}

// TestOutboxPostgresUnreachable: a database that cannot be reached is an error that names no
// password, at once.
func TestOutboxPostgresUnreachable(t *testing.T) {
	env := map[string]string{"LABELPRINTER_OUTBOX": "postgres://lp:Sekr1t-pw@127.0.0.1:1/plant"}
	start := time.Now()
	r := cli(t, context.Background(), env, "", "outbox", "enqueue", "--id", "a", "--label", "L")
	if r.code != 1 || strings.Contains(r.stderr, "Sekr1t-pw") || !strings.Contains(r.stderr, "PostgreSQL") {
		t.Errorf("exit %d, %q", r.code, r.stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestOutboxDrainCountsItsOwn: run --drain's summary counts the changes this run logged, its
// own, each after its commit: what another runner delivered from the same queue never reaches
// it, and a rejected entry fails the run whatever notifications the database delivers.
func TestOutboxDrainCountsItsOwn(t *testing.T) {
	var out strings.Builder
	a := &app{stdout: &out}
	tally := &drainTally{}
	log := slog.New(&tallyHandler{Handler: &changeHandler{w: io.Discard}, tally: tally})
	log.Info("outbox: sent", "id", "mine", "state", "sent")
	log.Info("outbox: rejected", "id", "mine-bad", "printer", "line1", "state", "rejected", "attempts", 1)
	log.Info("something else", "id", "x", "state", "unknown")
	err := a.drainSummary(tally, nil)
	if err == nil || !strings.Contains(err.Error(), "1 rejected") || strings.Contains(err.Error(), "unknown") {
		t.Errorf("summary: %v", err)
	}
	if !strings.Contains(out.String(), "sent      1  by this run") || !strings.Contains(out.String(), "rejected  1  by this run: mine-bad") {
		t.Errorf("summary:\n%s", out.String())
	}
}

// TestOutboxPostgresPooler: through PgBouncer in transaction mode, which does not carry
// LISTEN, an outbox command without --listen-db fails at once naming the pooler and the
// flag; with it, run --drain delivers and exits 1 for the rejected entry, counted.
func TestOutboxPostgresPooler(t *testing.T) {
	pooled, direct := pgtest.Pooler(t).NewDatabase(t)
	direct = pgtest.WithParam(direct, "password", "Sekr1t-ls")
	srv := startSim(t)
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": pooled}
	cli(t, ctx, env, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)
	r := cli(t, ctx, env, "", "outbox", "enqueue", "--create", "--id", "order-1", "--label", "MEDIUM")
	if r.code != 1 || !strings.Contains(r.stderr, "pooler in transaction mode") || !strings.Contains(r.stderr, "--listen-db") {
		t.Errorf("enqueue through the pooler without --listen-db: exit %d, %q", r.code, r.stderr)
	}
	c := func(args ...string) result {
		t.Helper()
		return cli(t, ctx, env, "", append([]string{"outbox", "--listen-db", direct}, args...)...)
	}
	c("enqueue", "--create", "--id", "order-1", "--label", "MEDIUM").ok(t)
	c("enqueue", "--id", "order-2", "--label", "NONE").ok(t)
	r = c("run", "--drain")
	if r.code != 1 || !strings.Contains(r.stderr, "outbox not drained cleanly: 1 rejected") ||
		!strings.Contains(r.stdout, "sent      1  by this run") || !strings.Contains(r.stdout, "rejected  1  by this run: order-2") {
		t.Errorf("drain: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "Sekr1t-ls") {
		t.Errorf("the listen DSN's password was printed:\n%s%s", r.stdout, r.stderr)
	}
	// A --listen-db through the pooler is refused the same way, naming the flag.
	r = cli(t, ctx, env, "", "outbox", "--listen-db", pooled, "list")
	if r.code != 1 || !strings.Contains(r.stderr, "--listen-db") {
		t.Errorf("--listen-db through the pooler: exit %d, %q", r.code, r.stderr)
	}
	file := map[string]string{"LABELPRINTER_OUTBOX": filepath.Join(t.TempDir(), "x.outbox")}
	if r = cli(t, ctx, file, "", "outbox", "--listen-db", direct, "list"); r.code != 2 || !strings.Contains(r.stderr, "--listen-db") {
		t.Errorf("--listen-db with a file: exit %d, %q", r.code, r.stderr)
	}
}

// TestOutboxPostgresKeywordDSN: --db in libpq's keyword/value form is a PostgreSQL database
// too, not an outbox file of that name; its password appears in no output.
func TestOutboxPostgresKeywordDSN(t *testing.T) {
	const pw = "Sekr1t-kw"
	down := map[string]string{"LABELPRINTER_OUTBOX": "host=127.0.0.1 port=1 user=lp password=" + pw + " dbname=plant connect_timeout=2"}
	for _, args := range [][]string{{"outbox", "list"}, {"outbox", "--queue-name", "line2", "list"}} {
		r := cli(t, context.Background(), down, "", args...)
		if r.code != 1 || strings.Contains(r.stdout+r.stderr, pw) || !strings.Contains(r.stderr, "PostgreSQL") {
			t.Errorf("%v on a database that is down: exit %d, %q", args, r.code, r.stderr)
		}
	}
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	kw := fmt.Sprintf("host=%s port=%s user=%s dbname=%s search_path=%s password=%s",
		u.Hostname(), u.Port(), u.User.Username(), strings.TrimPrefix(u.Path, "/"), u.Query().Get("search_path"), pw)
	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": kw}
	dir := t.TempDir()
	t.Chdir(dir)
	r := cli(t, context.Background(), env, "", "outbox", "enqueue", "--create", "--id", "kw-1", "--label", "MEDIUM").ok(t)
	if r = cli(t, context.Background(), env, "", "outbox", "list").ok(t); !strings.Contains(r.stdout, "kw-1") || strings.Contains(r.stdout, pw) {
		t.Errorf("list: %q", r.stdout)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("enqueue made a file of the DSN: %v", files[0].Name())
	}
}

// TestOutboxPostgresOtherController: a queue belongs to the controller of its first run (or of
// the bridge that made it); a run with another --url exits 2 naming both URLs and sends
// nothing, and the right --url delivers. Before, the other run printed every entry on the
// wrong controller and reported them sent.
func TestOutboxPostgresOtherController(t *testing.T) {
	dsn := pgtest.WithParam(pgtest.DSN(t), "password", "Sekr1t-pw")
	a, b := startSim(t), startSim(t)
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": dsn}
	c := func(args ...string) result { t.Helper(); return cli(t, ctx, env, "", args...).ok(t) }
	for _, srv := range []*printersim.Server{a, b} {
		cli(t, ctx, map[string]string{"LABELPRINTER_URL": srv.URL}, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)
	}
	c("outbox", "--queue-name", "line-a", "enqueue", "--create", "--id", "o1", "--label", "MEDIUM", "--queue")
	c("outbox", "--queue-name", "line-a", "run", "--drain", "--url", a.URL)
	c("outbox", "--queue-name", "line-a", "enqueue", "--id", "o2", "--label", "MEDIUM", "--queue")
	r := cli(t, ctx, env, "", "outbox", "--queue-name", "line-a", "run", "--drain", "--url", strings.ToUpper(b.URL[:4])+b.URL[4:]+"/")
	if r.code != 2 || !strings.Contains(r.stderr, "controller "+a.URL+", not to --url "+b.URL) || strings.Contains(r.stderr, "Sekr1t-pw") {
		t.Errorf("run with another --url: exit %d, stderr %q; want 2 naming %s and %s", r.code, r.stderr, a.URL, b.URL)
	}
	if n := b.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 0 {
		t.Errorf("%d printJobs reached the other controller", n)
	}
	c("outbox", "--queue-name", "line-a", "run", "--drain", "--url", a.URL)
	if n := a.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 2 {
		t.Errorf("%d printJobs reached the queue's controller, want 2", n)
	}
}
