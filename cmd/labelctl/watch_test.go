package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// background runs labelctl until ctx ends and returns its result on the channel, with its
// streams readable meanwhile.
func background(ctx context.Context, env map[string]string, args ...string) (*syncBuffer, *syncBuffer, <-chan int) {
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, strings.NewReader(""), &out, &errOut, func(k string) string { return env[k] })
	}()
	return &out, &errOut, done
}

// waitFor polls s until it holds want; the deadline only stops a broken test from hanging.
func waitFor(t *testing.T, s *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(s.String(), want) {
			return
		}
	}
	t.Fatalf("never saw %q in:\n%s", want, s.String())
}

func TestWatchCountersCommand(t *testing.T) {
	srv := startSim(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut, done := background(ctx, map[string]string{"LABELPRINTER_URL": srv.URL}, "watch", "counters", "--interval", "10ms", "--printer", "line1")
	waitFor(t, out, "triggers=0 bounces=0 printed=0\n")
	if _, err := srv.Sim.PressTrigger("line1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, "triggers=1 bounces=1 printed=0  (+0 printed, +1 bounces)\n")
	if err := srv.Sim.ResetCounters("line1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, "(counters went down: printer restarted or reset)")
	cancel()
	if code := <-done; code != 0 || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}

func TestWatchStatusCommandJSON(t *testing.T) {
	srv := startSim(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, _, done := background(ctx, map[string]string{"LABELPRINTER_URL": srv.URL}, "-o", "json", "watch", "status", "--interval", "10ms")
	waitFor(t, out, `"state":"STARTED"`)
	srv.Sim.SetStatus("ERROR", "RED", "lid open")
	waitFor(t, out, `"state":"ERROR"`)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last struct {
		State     string   `json:"state"`
		Printable bool     `json:"printable"`
		Errors    []string `json:"errors"`
	}
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &last) != nil || last.Printable || len(last.Errors) != 1 {
		t.Errorf("lines %q", lines)
	}
}

func TestWatchUsage(t *testing.T) {
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1"}
	for _, args := range [][]string{
		{"watch", "counters", "--interval", "0s"},
		{"watch", "status", "--interval", "1ms"},
		{"counters", "--watch", "--interval", "5ms"},
		{"print", "job", "--printer", "line1", "--label", "L", "--wait"},
		{"sim", "--addr", "127.0.0.1:0", "--trigger-every", "-1s"},
	} {
		if r := cli(t, context.Background(), env, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
}

func TestPrintJobWait(t *testing.T) {
	srv := startSim(t, printersim.WithAutoTrigger(5*time.Millisecond))
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1"}
	cli(t, context.Background(), env, `{"format":3}`, "labels", "put", "L", "-").ok(t)
	r := cli(t, context.Background(), env, "", "print", "job", "--label", "L", "--copies", "3", "--wait").ok(t)
	golden(t, "print-job-wait", r.stdout)
	if !strings.Contains(r.stderr, "waiting for 3 label(s)") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestPrintJobWaitInterrupted presses Ctrl-C while the poll after the one that saw the first
// label is still unanswered: a front holds every counters read back once one has shown a
// printed label, so the interruption lands on a fresh wait step every time.
func TestPrintJobWaitInterrupted(t *testing.T) {
	srv := startSim(t)
	seen := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	saw := false
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isCounters := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/printCounters")
		mu.Lock()
		hold := isCounters && saw
		mu.Unlock()
		if hold {
			once.Do(func() { close(seen) })
			<-r.Context().Done()
			return
		}
		rec := httptest.NewRecorder()
		srv.Sim.ServeHTTP(rec, r)
		if isCounters {
			var pc struct {
				PrintedLabels int64 `json:"printedLabels"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &pc) == nil && pc.PrintedLabels > 0 {
				mu.Lock()
				saw = true
				mu.Unlock()
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(front.Close)
	env := map[string]string{"LABELPRINTER_URL": front.URL, "LABELPRINTER_PRINTER": "line1"}
	cli(t, context.Background(), env, `{"format":3}`, "labels", "put", "L", "-").ok(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, errOut, done := background(ctx, env, "print", "job", "--label", "L", "--copies", "3", "--wait")
	waitFor(t, errOut, "waiting for 3 label(s)")
	if _, err := srv.Sim.PressTrigger("line1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no counters read after the first label")
	}
	cancel()
	code := <-done
	if code != 1 || !strings.Contains(errOut.String(), "stopped waiting after 1 of 3 label(s); the job is still selected on line1") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	if srv.Sim.QueueLength("line1") != 1 {
		t.Error("the job was deselected")
	}
}

func TestPrintTriggerConfirm(t *testing.T) {
	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1"}
	r := cli(t, context.Background(), env, "", "print", "trigger", "--confirm")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "outcome: bounced\n") || !strings.Contains(r.stderr, "trigger bounced") {
		t.Errorf("no job: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cli(t, context.Background(), env, `{"format":3}`, "labels", "put", "L", "-").ok(t)
	cli(t, context.Background(), env, "", "print", "job", "--label", "L").ok(t)
	r = cli(t, context.Background(), env, "", "print", "trigger", "--confirm").ok(t)
	golden(t, "print-trigger-confirm", r.stdout)
	r = cli(t, context.Background(), env, "", "-o", "json", "print", "trigger", "--confirm").ok(t)
	var doc struct {
		Outcome string `json:"outcome"`
		After   struct {
			PrintedLabels int `json:"printedLabels"`
		} `json:"after"`
	}
	if json.Unmarshal([]byte(r.stdout), &doc) != nil || doc.Outcome != "printed" || doc.After.PrintedLabels != 2 {
		t.Errorf("json %s", r.stdout)
	}
}

// TestPrintJobWaitTimeout: --wait-timeout ends a wait that nothing triggers with exit 1 and
// how far it got, leaving the job selected; with a label printed meanwhile, it counts it.
func TestPrintJobWaitTimeout(t *testing.T) {
	srv := startSim(t)
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1"}
	cli(t, context.Background(), env, `{"format":3}`, "labels", "put", "L", "-").ok(t)
	r := cli(t, context.Background(), env, "", "print", "job", "--label", "L", "--copies", "3", "--wait", "--wait-timeout", "300ms")
	want := "labelctl: gave up waiting after --wait-timeout 300ms: 0 of 3 label(s) printed; the job is still selected on line1\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	if srv.Sim.QueueLength("line1") != 1 {
		t.Error("the job was deselected")
	}

	_, errOut, done := background(context.Background(), env, "print", "job", "--label", "L", "--copies", "3", "--wait", "--wait-timeout", "3s")
	waitFor(t, errOut, "waiting for 3 label(s)")
	if _, err := srv.Sim.PressTrigger("line1"); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 1 || !strings.Contains(errOut.String(), "gave up waiting after --wait-timeout 3s: 1 of 3 label(s) printed; the job is still selected on line1") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}

	for _, args := range [][]string{
		{"print", "job", "--label", "L", "--copies", "3", "--wait-timeout", "1s"},
		{"print", "job", "--label", "L", "--copies", "3", "--wait", "--wait-timeout", "-1s"},
	} {
		if r := cli(t, context.Background(), env, "", args...); r.code != 2 || !strings.Contains(r.stderr, "--wait-timeout") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming --wait-timeout", args, r.code, r.stderr)
		}
	}
}
