package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// goTool finds the go command; go test puts its own first on PATH, so the examples build with
// the toolchain that runs the tests.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the examples with")
	}
	return p
}

// TestExamples builds every example and runs it against the simulator it starts itself, as a
// reader would with "go run ./examples/NAME".
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin := t.TempDir()
	build := exec.Command(goTool(t), "build", "-o", bin+string(os.PathSeparator), "./...")
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}

	cases := []struct {
		name string
		args []string
		// interrupt, when set, sends Ctrl-C after this long (for examples that run until stopped).
		interrupt time.Duration
		want      []string
	}{
		{name: "quickstart", want: []string{
			"uploaded image quickstart-logo", "image is READY", "stored label", "stored table",
			"simulation for S12-342C", "selected the print job", "trigger 1:", "trigger 2:",
			"counters:", "labels printed", "history:", "deselected every job", "deleted the table", "done",
		}},
		{name: "print-from-table", args: []string{"-sku", "S12-500A"}, want: []string{"selected S12-500A", "printed labels: 1"}},
		{name: "upload-image", want: []string{"example-logo: READY, 120x40 px", "intent PERCEPTUAL"}},
		{name: "history", args: []string{"-resolution", "HOURS"}, want: []string{"    7 #######"}},
		{name: "outbox", want: []string{
			"enqueued 4 orders twice: 4 entries", "order-4711/1  unknown   attempts=3", "order-4711/2  sent      attempts=1",
			"order-4712/1  rejected  attempts=1", "order-4713/1  sent      attempts=1", "printJob requests: 6,", "done",
		}},
		{name: "watch-counters", args: []string{"-every", "200ms"}, interrupt: 1500 * time.Millisecond, want: []string{"triggers=", "printed=", " (+", "stopped"}},
		{name: "print-and-confirm", args: []string{"-every", "20ms"}, want: []string{"printed 5/5", "all 5 labels printed", "trigger outcome: bounced (triggers 5 -> 6, bounces 0 -> 1, printed 5 -> 5)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, tc.name), tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.interrupt > 0 {
				time.AfterFunc(tc.interrupt, func() { _ = cmd.Process.Signal(os.Interrupt) })
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", tc.name, err, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("%s output lacks %q:\n%s", tc.name, w, stdout.String())
				}
			}
		})
	}
}
