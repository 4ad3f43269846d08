package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/outbox"
)

var timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// TestOutboxMessages: every outbox error labelctl prints is one line naming what was typed
// (the ID, the file, the --state value), without the outbox's chains.
func TestOutboxMessages(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "x.outbox")
	env := map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1", "LABELPRINTER_OUTBOX": db, "LABELPRINTER_PRINTER": "line1"}
	c := func(args ...string) result { return cli(t, ctx, env, "", args...) }
	c("outbox", "enqueue", "--id", "a1", "--label", "L").ok(t)
	c("outbox", "enqueue", "--id", "a2", "--label", "L").ok(t)
	c("outbox", "cancel", "a2").ok(t)
	c("outbox", "prune", "--older-than", "0s").ok(t)

	for _, tc := range []struct {
		args []string
		code int
		want string // the whole line after "labelctl: ", with T for a time
	}{
		{[]string{"outbox", "enqueue", "--id", "a2", "--label", "L"}, 1,
			`--id "a2": an entry with this ID was cancelled at T and pruned at T; an ID is taken once, so nothing was added`},
		{[]string{"outbox", "get", "a2"}, 1, `entry "a2" was cancelled at T and pruned at T; only its ID is kept`},
		{[]string{"outbox", "cancel", "a2"}, 1, `entry "a2" was cancelled at T and pruned at T; only its ID is kept`},
		{[]string{"outbox", "get", "nope"}, 1, `no entry "nope" in ` + db + ` (see 'labelctl outbox list')`},
		{[]string{"outbox", "resend", "nope"}, 1, `no entry "nope" in ` + db + ` (see 'labelctl outbox list')`},
		{[]string{"outbox", "resend", "a1"}, 1, `cannot resend entry "a1": it is pending; only unknown entries can be resent`},
		{[]string{"outbox", "list", "--state", "sendng"}, 2,
			`--state: "sendng" is not a state; the states are pending, sending, sent, rejected, unknown, expired, cancelled (did you mean sending?)`},
		{[]string{"outbox", "list", "--state", "sent,Unknwn"}, 2,
			`--state: "Unknwn" is not a state; the states are pending, sending, sent, rejected, unknown, expired, cancelled (did you mean unknown?)`},
		{[]string{"outbox", "list", "--state", "lost"}, 2,
			`--state: "lost" is not a state; the states are pending, sending, sent, rejected, unknown, expired, cancelled`},
	} {
		r := c(tc.args...)
		got := timeRE.ReplaceAllString(r.stderr, "T")
		if r.code != tc.code || got != "labelctl: "+tc.want+"\n" {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if r := c("outbox", "list", "--state", "SENT,cancelled"); r.code != 0 {
		t.Errorf("states in any case: exit %d, %q", r.code, r.stderr)
	}

	// A file another process holds.
	ob, err := outbox.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	r := c("outbox", "list")
	if want := "labelctl: outbox file " + db + " is in use by another process (a running 'labelctl outbox run', say); try again once it has stopped\n"; r.code != 1 || r.stderr != want {
		t.Errorf("a held file: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if strings.Contains(r.stderr, "outbox: ") {
		t.Errorf("the package's prefix: %q", r.stderr)
	}
}
