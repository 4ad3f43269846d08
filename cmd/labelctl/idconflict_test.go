package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutboxEnqueueIDConflict: an --id held for another printer is refused in one line,
// exit 1, and nothing is added; the same printer again still says it is already there.
func TestOutboxEnqueueIDConflict(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_PRINTER": "line1",
		"LABELPRINTER_OUTBOX": filepath.Join(t.TempDir(), "line1.outbox")}
	cli(t, ctx, env, "", "outbox", "enqueue", "--id", "order-1", "--label", "MEDIUM").ok(t)
	r := cli(t, ctx, env, "", "outbox", "enqueue", "--id", "order-1", "--label", "MEDIUM", "--printer", "line2")
	want := "labelctl: --id order-1 is already in the outbox for printer line1 (printJob pending), not for printer line2; nothing added: one id is one order\n"
	if r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Errorf("another printer: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	r = cli(t, ctx, env, "", "outbox", "enqueue", "--id", "order-1", "--label", "MEDIUM", "--printer", "")
	if r.code != 1 || !strings.Contains(r.stderr, "not for the single-printer paths; nothing added") {
		t.Errorf("single-printer paths: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := cli(t, ctx, env, "", "outbox", "enqueue", "--id", "order-1", "--label", "OTHER").ok(t); !strings.Contains(r.stdout, "already in the outbox") {
		t.Errorf("the same printer: %q", r.stdout)
	}
	list := cli(t, ctx, env, "", "outbox", "list", "-o", "json").ok(t)
	if n := strings.Count(list.stdout, `"id"`); n != 1 {
		t.Errorf("%d entries listed, want 1:\n%s", n, list.stdout)
	}
}
