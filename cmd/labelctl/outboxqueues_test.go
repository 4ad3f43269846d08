package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labelprinter/go-labelprinter/internal/pgtest"
)

// TestOutboxQueues: queues lists a database's queues with their controller and entries by
// state, without creating anything; every command on a queue that is not there exits 2 naming
// those that are, and only enqueue --create makes one. Before, a mistyped --queue-name (or the
// default one beside a bridge's queues) listed nothing and exited 0.
func TestOutboxQueues(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv := startSim(t)
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": dsn}
	c := func(args ...string) result { t.Helper(); return cli(t, ctx, env, "", args...) }
	cli(t, ctx, env, `{"format":3}`, "labels", "put", "MEDIUM", "-").ok(t)

	if r := c("outbox", "queues").ok(t); strings.TrimSpace(r.stdout) != "QUEUE  CONTROLLER  PENDING  SENDING  SENT  REJECTED  UNKNOWN  EXPIRED  CANCELLED" {
		t.Errorf("queues of a new database:\n%s", r.stdout)
	}
	if r := c("outbox", "list"); r.code != 2 || !strings.Contains(r.stderr, `queue "default" of postgres://`) ||
		!strings.Contains(r.stderr, "does not exist: that database holds no queue yet") || strings.Contains(r.stderr, "creating") {
		t.Errorf("list of a new database: exit %d, %q", r.code, r.stderr)
	}
	if r := c("outbox", "--queue-name", "line-1", "enqueue", "--id", "o1", "--label", "MEDIUM"); r.code != 2 || !strings.Contains(r.stderr, "enqueue --create") {
		t.Errorf("enqueue without --create: exit %d, %q", r.code, r.stderr)
	}
	c("outbox", "--queue-name", "line-1", "enqueue", "--create", "--id", "o1", "--label", "MEDIUM").ok(t)
	if r := c("outbox", "--queue-name", "line-1", "enqueue", "--id", "t1", "--trigger").ok(t); r.stdout != "enqueued t1 (trigger) for line1\n" {
		t.Errorf("enqueue --trigger: %q", r.stdout)
	}
	if r := c("outbox", "--queue-name", "line-1", "enqueue", "--id", "d1", "--deselect").ok(t); r.stdout != "enqueued d1 (deselect) for line1\n" {
		t.Errorf("enqueue --deselect: %q", r.stdout)
	}
	for _, args := range [][]string{{"list"}, {"get", "o1"}, {"cancel", "o1"}, {"resend", "o1"}, {"prune"}, {"run", "--drain"}, {"enqueue", "--id", "x", "--label", "MEDIUM"}} {
		r := c(append([]string{"outbox", "--queue-name", "line-l"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, `queue "line-l" of postgres://`) || !strings.Contains(r.stderr, "does not exist: its queues are line-1 (did you mean --queue-name line-1?)") {
			t.Errorf("%v on a mistyped queue: exit %d, %q", args, r.code, r.stderr)
		}
	}
	if r := c("outbox", "list"); r.code != 2 || !strings.Contains(r.stderr, "its queues are line-1") {
		t.Errorf("list of the default queue beside line-1: exit %d, %q", r.code, r.stderr)
	}
	c("outbox", "--queue-name", "line-1", "run", "--drain").ok(t)
	for route, want := range map[string]int{"printJob": 2, "trigger": 1} { // the deselect is an empty printJob
		if n := srv.Sim.Requests("POST", "/api/v3/printers/{name}/"+route); n != want {
			t.Errorf("%d %s requests reached the printer, want %d", n, route, want)
		}
	}
	c("outbox", "--queue-name", "line-2", "enqueue", "--create", "--id", "o2", "--label", "MEDIUM").ok(t)
	want := "QUEUE   CONTROLLER  PENDING  SENDING  SENT  REJECTED  UNKNOWN  EXPIRED  CANCELLED\n" +
		"line-1  " + srv.URL + "  0  0  3  0  0  0  0\n" +
		"line-2  -  1  0  0  0  0  0  0\n"
	if r := c("outbox", "queues").ok(t); strings.Join(strings.Fields(r.stdout), " ") != strings.Join(strings.Fields(want), " ") {
		t.Errorf("queues:\n%s\nwant\n%s", r.stdout, want)
	}
	if r := c("-o", "json", "outbox", "queues").ok(t); !strings.Contains(r.stdout, `"queue": "line-2"`) || !strings.Contains(r.stdout, `"pending": 1`) {
		t.Errorf("queues -o json:\n%s", r.stdout)
	}
	if r := c("outbox", "--queue-name", "line-1", "get", "t1").ok(t); !strings.Contains(r.stdout, `"kind": "trigger"`) || !strings.Contains(r.stdout, `"state": "sent"`) {
		t.Errorf("get t1:\n%s", r.stdout)
	}
}

// TestOutboxEnqueueKinds: --trigger and --deselect take no job flag, not both at once, and a
// trigger needs a printer's name; each refusal is a usage error before anything is stored.
func TestOutboxEnqueueKinds(t *testing.T) {
	env := map[string]string{"LABELPRINTER_OUTBOX": filepath.Join(t.TempDir(), "x.outbox")}
	for args, want := range map[string]string{
		"--trigger --printer line1 --label MEDIUM": "--trigger sends no job: --label is for a print job",
		"--deselect --copies 2":                    "--deselect sends no job: --copies is for a print job",
		"--trigger --deselect --printer line1":     "give --trigger or --deselect, not both",
		"--trigger":                                "--trigger needs --printer",
		"--create --printer line1 --label MEDIUM":  "--create makes a queue in PostgreSQL",
	} {
		r := cli(t, context.Background(), env, "", append([]string{"outbox", "enqueue"}, strings.Fields(args)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("enqueue %s: exit %d, %q; want 2 and %q", args, r.code, r.stderr, want)
		}
	}
	if _, err := os.Stat(env["LABELPRINTER_OUTBOX"]); err == nil {
		t.Error("a refused enqueue made the outbox file")
	}
}

// TestOutboxPasswordFile: --db-password-file gives --db its password as the bridge's
// password_file does (less one trailing newline), refuses a second password in the DSN, and
// no output shows it.
func TestOutboxPasswordFile(t *testing.T) {
	const pw = "Sekr1t-pf"
	dir := t.TempDir()
	file := filepath.Join(dir, "pgpass")
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": dsn, "LABELPRINTER_OUTBOX_PASSWORD_FILE": file}
	r := cli(t, ctx, env, "", "outbox", "enqueue", "--create", "--id", "o1", "--label", "MEDIUM").ok(t)
	if r = cli(t, ctx, env, "", "outbox", "list").ok(t); !strings.Contains(r.stdout, "o1") {
		t.Errorf("list with the password file: %q", r.stdout)
	}
	for _, c := range []struct {
		db, file, want string
	}{
		{pgtest.WithParam(dsn, "password", pw), file, "--db holds a password and --db-password-file is given"},
		{dsn, filepath.Join(dir, "missing"), "--db-password-file: " + filepath.Join(dir, "missing") + ": no such file"},
		{filepath.Join(dir, "x.outbox"), file, "--db-password-file is the password of a PostgreSQL --db"},
	} {
		r := cli(t, ctx, map[string]string{}, "", "outbox", "--db", c.db, "--db-password-file", c.file, "list")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, pw) {
			t.Errorf("--db %s --db-password-file %s: exit %d, %q; want 2 and %q", c.db, c.file, r.code, r.stderr, c.want)
		}
	}
	// The variable is for the databases: beside an outbox file it is left alone.
	fileEnv := map[string]string{"LABELPRINTER_PRINTER": "line1", "LABELPRINTER_OUTBOX": filepath.Join(dir, "line1.outbox"), "LABELPRINTER_OUTBOX_PASSWORD_FILE": file}
	cli(t, ctx, fileEnv, "", "outbox", "enqueue", "--id", "f1", "--label", "MEDIUM").ok(t)
	// A role the server does not know, with the password from the file: one cause, said once,
	// without the TLS the server refused under the default sslmode, and without the password.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("sslmode")
	u.RawQuery, u.User = q.Encode(), url.User("nobody")
	r = cli(t, ctx, map[string]string{}, "", "outbox", "--db", u.String(), "--db-password-file", file, "list")
	if r.code != 1 || strings.Contains(r.stderr, "TLS") || strings.Count(r.stderr, `role "nobody" does not exist`) != 1 ||
		!strings.Contains(r.stderr, "PostgreSQL: connecting: cannot connect as user nobody") || strings.Contains(r.stderr, pw) {
		t.Errorf("an unknown role: exit %d, %q", r.code, r.stderr)
	}

	// A role the server asks for its password (every other one here is trusted): the file's
	// password is what logs it in, and a wrong one is refused, said without either password.
	role := pgtest.PasswordRole(t)
	good := filepath.Join(dir, "role-pass")
	bad := filepath.Join(dir, "role-wrong")
	const wrong = "Wr0ng-pf-7c1"
	if err := os.WriteFile(good, []byte(role.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(wrong+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := func(file string, args ...string) result {
		t.Helper()
		return cli(t, ctx, map[string]string{}, "", append([]string{"outbox", "--db", role.DSN, "--db-password-file", file}, args...)...)
	}
	db(good, "enqueue", "--create", "--printer", "line1", "--id", "r1", "--label", "MEDIUM").ok(t)
	if r = db(good, "list").ok(t); !strings.Contains(r.stdout, "r1") {
		t.Errorf("list as %s with its password file: %q", role.Name, r.stdout)
	}
	r = db(bad, "list")
	if r.code != 1 || !strings.Contains(r.stderr, "password authentication failed for user \""+role.Name+"\"") ||
		strings.Contains(r.stderr, wrong) || strings.Contains(r.stderr, role.Password) || strings.Contains(r.stderr, "TLS") {
		t.Errorf("as %s with a wrong password file: exit %d, %q; want 1 and the password refused, no password", role.Name, r.code, r.stderr)
	}
}
