package main

import (
	"context"
	"path/filepath"
	"testing"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// TestBridgeKeysNamed: the id a person reads on the bridge's topics (o-1) finds no entry in the
// bridge's outbox file, which keys it by printer (line1/o-1): get, cancel and resend say
// under which keys it is held, and the key itself works.
func TestBridgeKeysNamed(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "bridge.outbox")
	ob, err := outbox.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []outbox.Intent{
		{ID: "line1/o-1", Printer: "line1", Job: labelprinter.PrintJob{LabelName: "L"}},
		{ID: "line2/o-1", Printer: "line2", Job: labelprinter.PrintJob{LabelName: "L"}},
		{ID: "line2/other/o-1", Printer: "line2", Job: labelprinter.PrintJob{LabelName: "L"}}, // line2's "other/o-1"
	} {
		if _, err := ob.Enqueue(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_OUTBOX": db}
	for _, op := range []string{"get", "cancel", "resend"} {
		r := cli(t, ctx, env, "", "outbox", op, "o-1")
		want := `labelctl: no entry "o-1" in ` + db + ` (see 'labelctl outbox list'); the MQTT bridge keeps a printer's command under printer/id: line1/o-1, line2/o-1` + "\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("outbox %s o-1: exit %d, stderr %q; want 1, %q", op, r.code, r.stderr, want)
		}
	}
	cli(t, ctx, env, "", "outbox", "get", "line1/o-1").ok(t)
	cli(t, ctx, env, "", "outbox", "cancel", "line1/o-1").ok(t)
}
