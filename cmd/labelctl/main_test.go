package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/spf13/cobra"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop() // the PostgreSQL the outbox tests started, before goroutines are counted
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// syncBuffer is safe to write from the command and read from the test.
type syncBuffer = testkit.SyncBuffer

type result struct {
	code           int
	stdout, stderr string
}

// cli runs labelctl in-process with env and stdin.
func cli(t *testing.T, ctx context.Context, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errOut syncBuffer
	code := run(ctx, args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return env[k] })
	return result{code, out.String(), errOut.String()}
}

func (r result) ok(t *testing.T) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	return r
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/labelctl -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n got:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func startSim(t *testing.T, opts ...printersim.Option) *printersim.Server {
	t.Helper()
	srv, err := printersim.Start(append([]printersim.Option{printersim.WithPrinters("line1", "line2"), printersim.WithProcessingDelay(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUsageErrors(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1"}
	for _, args := range [][]string{
		{"nope"},
		{"labels", "get"},
		{"labels", "list", "--bogus"},
		{"-o", "yaml", "labels", "list"},
		{"print", "trigger"},
		{"print", "abort"},
		{"print", "job", "--printer", "line1"},
		{"print", "job", "--printer", "line1", "--label", "L", "--key", "k"},
		{"history", "--since", "1h", "--start", "2026-01-01T00:00:00Z"},
		{"history", "--start", "yesterday"},
		{"labels", "put", "L", "/no/such/file.json"},
		{"labels", "get", ".."},
	} {
		r := cli(t, ctx, env, "", args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "labelctl: ") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := cli(t, ctx, nil, "", "counters"); r.code != 2 || !strings.Contains(r.stderr, "--url") {
		t.Errorf("no URL: exit %d, %q", r.code, r.stderr)
	}
	if r := cli(t, ctx, nil, "{}", "labels", "put", "L", "-"); r.code != 2 {
		t.Errorf("no URL with stdin: exit %d", r.code)
	}
}

// TestUsageErrorsEveryCommand walks the whole command tree: whatever the command, a usage
// mistake exits 2 with nothing on stdout, so a script never mistakes a typo for success. The
// printer address is a closed port, so a command that got past its usage checks would fail
// with 1 instead. Every numeric and duration flag of every command is tried with 0, a negative
// and a malformed value (checkNumericFlags, numericFlags).
func TestUsageErrorsEveryCommand(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1"}
	a := &app{env: func(string) string { return "" }}
	seen := map[string]bool{}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := strings.Fields(cmd.CommandPath())[1:]
		check := func(what string, args []string, stderr func(string) bool) {
			t.Helper()
			r := cli(t, ctx, env, "", append(slices.Clone(path), args...)...)
			if r.code != 2 || r.stdout != "" || !stderr(r.stderr) {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", cmd.CommandPath(), what, r.code, r.stdout, r.stderr)
			}
		}
		hasLine := func(s string) bool { return strings.HasPrefix(s, "labelctl: ") }
		check("with an unknown flag", []string{"--no-such-flag"}, hasLine)
		check("with a malformed flag", []string{"--timeout", "soon"}, hasLine)
		if cmd.HasSubCommands() {
			check("frobnicate", []string{"frobnicate"}, func(s string) bool {
				return s == fmt.Sprintf("labelctl: unknown command %q for %q\n", "frobnicate", cmd.CommandPath())
			})
			check("without a subcommand", nil, func(s string) bool {
				return strings.Contains(s, "Usage:") && strings.HasSuffix(s, "labelctl: "+cmd.CommandPath()+" needs a subcommand\n")
			})
		} else {
			if cmd.Name() != "help" { // cobra's help answers any topic
				check("with nine arguments", strings.Fields("a b c d e f g h i"), hasLine)
			}
			checkNumericFlags(t, cmd, seen)
		}
		for _, sub := range cmd.Commands() {
			if !sub.Hidden {
				walk(sub)
			}
		}
	}
	walk(a.rootCommand())
	for name := range numericFlags {
		if !seen[name] {
			t.Errorf("numericFlags lists --%s, which no command has", name)
		}
	}
}

func TestPrinterFailures(t *testing.T) {
	ctx := context.Background()
	r := cli(t, ctx, map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1"}, "", "--timeout", "2s", "counters")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "GET /api/v3/printCounters") {
		t.Errorf("unreachable printer: exit %d, stderr %q", r.code, r.stderr)
	}
	srv := startSim(t, printersim.WithToken("CANARY-TOKEN-cli"))
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	r = cli(t, ctx, env, "", "labels", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "401 Unauthorized: missing or wrong bearer token") {
		t.Errorf("no token: exit %d, %q", r.code, r.stderr)
	}
	env["LABELPRINTER_TOKEN"] = "CANARY-TOKEN-cli"
	r = cli(t, ctx, env, "", "-v", "labels", "list").ok(t)
	if strings.Contains(r.stderr+r.stdout, "CANARY-TOKEN-cli") || !strings.Contains(r.stderr, "labelprinter request") {
		t.Errorf("verbose log: %q", r.stderr)
	}
	// -v logs each answer too: its status and how long it took.
	answer := regexp.MustCompile(`(?m)msg="labelprinter answer" method=GET path=/api/v3/labels duration=[0-9.]+[µnm]?s status=200$`)
	if !answer.MatchString(r.stderr) {
		t.Errorf("no answer line in the verbose log: %q", r.stderr)
	}
	delete(env, "LABELPRINTER_TOKEN")
	r = cli(t, ctx, env, "", "-v", "labels", "list")
	if r.code != 1 || !strings.Contains(r.stderr, `msg="labelprinter answer" method=GET path=/api/v3/labels`) || !strings.Contains(r.stderr, "status=401") {
		t.Errorf("verbose log of a refusal: %q", r.stderr)
	}
	env["LABELPRINTER_TOKEN"] = "CANARY-TOKEN-cli"
	r = cli(t, ctx, env, "", "labels", "get", "missing")
	if r.code != 1 || r.stderr != "labelctl: GET /api/v3/labels/missing: 404 Not Found: no label \"missing\"\n" {
		t.Errorf("missing label: exit %d, %q", r.code, r.stderr)
	}
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCommands(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1"}
	c := func(args ...string) result { t.Helper(); return cli(t, ctx, env, "", args...).ok(t) }

	label := writeFile(t, "label.json", []byte(`{"format":3,"width":50,"height":30,"objs":[{"type":"Text","text":"{{Name}}"}]}`))
	golden(t, "labels-put", c("labels", "put", "MEDIUM", label).stdout)
	cli(t, ctx, env, `{"format":3}`, "labels", "put", "SMALL", "-").ok(t)
	golden(t, "labels-list", c("labels", "list").stdout)
	golden(t, "labels-list-json", c("-o", "json", "labels", "list").stdout)
	golden(t, "labels-get", c("labels", "get", "SMALL").stdout)

	table := writeFile(t, "table.json", []byte(`{"columns":["SKU","Name","Label"],"rows":[["A1","Bolt","MEDIUM"],["B2","Nut","SMALL"]]}`))
	c("tables", "put", "Products", table)
	golden(t, "tables-list", c("tables", "list").stdout)
	golden(t, "labels-simulate", c("labels", "simulate", "MEDIUM", "--table", "Products", "--key-column", "SKU", "--key", "B2").stdout)

	img := writeFile(t, "logo.png", pngBytes(t, 60, 24))
	golden(t, "images-put", c("images", "put", "logo", img, "--intent", "PERCEPTUAL").stdout)
	golden(t, "images-wait", c("images", "wait", "logo").stdout)
	golden(t, "images-info-json", c("-o", "json", "images", "info", "logo").stdout)
	golden(t, "images-list-details", c("images", "list", "--details").stdout)
	out := filepath.Join(t.TempDir(), "back.png")
	c("images", "get", "logo", "--file", out)
	if back, _ := os.ReadFile(out); !bytes.Equal(back, pngBytes(t, 60, 24)) {
		t.Error("downloaded image differs")
	}
	if r := c("images", "get", "logo"); r.stdout != string(pngBytes(t, 60, 24)) {
		t.Error("image to stdout differs")
	}
	cli(t, ctx, env, "not an image", "images", "put", "x", "-")

	golden(t, "print-job", c("print", "job", "--table", "Products", "--key-column", "SKU", "--key", "A1", "--label-column", "Label", "--copies", "2", "--queue=false").stdout)
	c("print", "trigger")
	c("print", "trigger")
	r := cli(t, ctx, env, "", "print", "trigger")
	if r.code != 1 || r.stderr != "labelctl: POST /api/v3/printers/line1/trigger: 409 Conflict: no job selected on line1\n" {
		t.Errorf("third trigger: exit %d, %q", r.code, r.stderr)
	}
	golden(t, "counters", c("counters").stdout)
	golden(t, "counters-json", c("-o", "json", "counters").stdout)
	golden(t, "counters-line2", c("--printer", "line2", "counters").stdout)
	if q := srv.Sim.QueueLength("line1"); q != 0 {
		t.Errorf("queue %d after the job's copies", q)
	}
	c("print", "job", "--label", "SMALL")
	c("print", "abort")
	c("print", "job", "--label", "SMALL")
	c("print", "deselect")
	if q := srv.Sim.QueueLength("line1"); q != 0 {
		t.Errorf("queue %d after deselect", q)
	}

	hist := c("history", "--resolution", "hours", "--since", "24h").stdout
	if !regexp.MustCompile(`(?m)^START\s+COUNT\n\S+\s+2\n$`).MatchString(hist) {
		t.Errorf("history table:\n%s", hist)
	}
	if chart := c("history", "--chart", "--resolution", "MINUTES").stdout; !strings.Contains(chart, "labels printed") || !strings.ContainsAny(chart, "┤┼") {
		t.Errorf("chart:\n%s", chart)
	}
	if j := c("-o", "json", "history").stdout; !strings.Contains(j, `"Count": [`) && !strings.Contains(j, `"count"`) {
		t.Errorf("history JSON:\n%s", j)
	}
	golden(t, "status", c("status").stdout)
	golden(t, "status-json", c("-o", "json", "status").stdout)

	c("tables", "delete", "Products")
	c("labels", "delete", "MEDIUM")
	c("images", "delete", "logo")
	golden(t, "tables-list-empty", c("tables", "list").stdout)
}

func TestProgressAndCompletion(t *testing.T) {
	srv := startSim(t)
	img := writeFile(t, "logo.png", pngBytes(t, 400, 400))
	var out, errOut syncBuffer
	env := func(k string) string {
		return map[string]string{"LABELPRINTER_URL": srv.URL}[k]
	}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, env: env, terminal: func(io.Writer) bool { return true }}
	root := a.rootCommand()
	root.SetArgs([]string{"images", "put", "big", img})
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.client.Close()
	if !strings.Contains(errOut.String(), "uploading") {
		t.Errorf("no progress bar on a terminal: %q", errOut.String())
	}
	// Not a terminal: quiet.
	r := cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": srv.URL}, "", "images", "put", "big2", img).ok(t)
	if r.stderr != "" {
		t.Errorf("progress on a pipe: %q", r.stderr)
	}

	cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": srv.URL}, `{}`, "labels", "put", "alpha label", "-").ok(t)
	comp := cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": srv.URL}, "", "__complete", "labels", "get", "").ok(t)
	if !strings.Contains(comp.stdout, "alpha label") {
		t.Errorf("label completion: %q", comp.stdout)
	}
	comp = cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": srv.URL}, "", "__complete", "--printer", "").ok(t)
	if !strings.Contains(comp.stdout, "line1\nline2") {
		t.Errorf("printer completion: %q", comp.stdout)
	}
	comp = cli(t, context.Background(), nil, "", "completion", "bash").ok(t)
	if !strings.Contains(comp.stdout, "labelctl") {
		t.Error("no bash completion script")
	}
}

func TestWatchAndSim(t *testing.T) {
	srv := startSim(t)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	r := cli(t, ctx, map[string]string{"LABELPRINTER_URL": srv.URL}, "", "counters", "--watch", "--interval", "50ms", "--printer", "line2")
	// Only changes are printed: the first reading, and nothing while the counters stand still.
	if r.code != 0 || strings.Count(r.stdout, "triggers=0 bounces=0 printed=0") != 1 {
		t.Errorf("watch: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	simCtx, stop := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(simCtx, []string{"sim", "--addr", "127.0.0.1:0", "--printers", "a,b", "--require-content-length"}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	}()
	var url string
	for deadline := time.Now().Add(5 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`at (http://\S+) with printers a, b`).FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		stop()
		<-done
		t.Fatalf("sim printed %q", out.String())
	}
	cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": url}, "", "--printer", "b", "counters").ok(t)
	cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": url}, "", "--printer", "b", "print", "abort").ok(t)
	// The page is on by default, and its URL printed.
	hc := &http.Client{Transport: &http.Transport{}}
	if !strings.Contains(out.String(), "open "+url+"/ in a browser") {
		t.Errorf("sim did not print the page's URL: %q", out.String())
	}
	if resp, err := hc.Get(url + "/"); err != nil || resp.StatusCode != 200 {
		t.Errorf("GET / of labelctl sim: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// --require-content-length: a body of unknown length, sent chunked, is refused.
	resp, err := hc.Post(url+"/api/v3/printers/b/abortPrint", "application/json", io.MultiReader())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	hc.CloseIdleConnections()
	if resp.StatusCode != http.StatusLengthRequired {
		t.Errorf("chunked POST to labelctl sim --require-content-length: %d", resp.StatusCode)
	}
	stop()
	if code := <-done; code != 0 {
		t.Errorf("sim exit %d: %s", code, errOut.String())
	}
}
