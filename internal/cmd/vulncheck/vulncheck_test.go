package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndex builds a database from two entries and reads it as govulncheck's client does:
// index/db.json's time, index/modules.json listing each module's entries once, ID/<id>.json.
func TestIndex(t *testing.T) {
	out := filepath.Join(t.TempDir(), "db")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"index", "-osv", "testdata/osv", "-version", "v0.0.0-20261105234957-e22db6528018", "-out", out}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var db struct{ Modified string }
	readJSON(t, filepath.Join(out, "index", "db.json"), &db)
	// The newest entry's time is after the module's: the database's time is the newer.
	if db.Modified != "2026-12-01T10:00:00Z" {
		t.Errorf("db.json modified = %s, want the newest entry's, 2026-12-01T10:00:00Z", db.Modified)
	}
	var mods []struct {
		Path  string
		Vulns []struct{ ID, Fixed string }
	}
	readJSON(t, filepath.Join(out, "index", "modules.json"), &mods)
	got := map[string]string{}
	for _, m := range mods {
		var ids []string
		for _, v := range m.Vulns {
			ids = append(ids, v.ID)
			if v.Fixed != "" {
				t.Errorf("%s %s: fixed %q written; govulncheck would skip the entry for versions past it", m.Path, v.ID, v.Fixed)
			}
		}
		got[m.Path] = strings.Join(ids, " ")
	}
	want := map[string]string{"example.com/a": "GO-2026-0001 GO-2026-0002", "stdlib": "GO-2026-0001"}
	if len(got) != len(want) || got["example.com/a"] != want["example.com/a"] || got["stdlib"] != want["stdlib"] {
		t.Errorf("modules.json = %v, want %v", got, want)
	}
	for _, id := range []string{"GO-2026-0001", "GO-2026-0002"} {
		a, err := os.ReadFile(filepath.Join("testdata", "osv", id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "ID", id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("ID/%s.json is not the entry as given", id)
		}
	}
	// A second build into the same place is refused rather than mixed with the first.
	if code := run([]string{"index", "-osv", "testdata/osv", "-version", "v0.0.0-20261105234957-e22db6528018", "-out", out}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "exists already") {
		t.Errorf("building over an existing database: exit %d, %q", code, stderr.String())
	}
}

func TestIndexRefuses(t *testing.T) {
	dir := t.TempDir()
	misnamed := filepath.Join(dir, "osv")
	if err := os.Mkdir(misnamed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(misnamed, "GO-2026-9999.json"), []byte(`{"id":"GO-2026-0001"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "-osv", "testdata/osv", "-version", "v1.0.0", "-out", filepath.Join(dir, "a")}, `-version "v1.0.0" is not a pseudo-version`},
		{[]string{"index", "-osv", misnamed, "-version", "v0.0.0-20261105234957-e22db6528018", "-out", filepath.Join(dir, "b")}, `must be named after its id, which is "GO-2026-0001"`},
		{[]string{"index", "-osv", dir, "-version", "v0.0.0-20261105234957-e22db6528018", "-out", filepath.Join(dir, "c")}, "holds no .json entries"},
		{[]string{"index", "-osv", "testdata/osv"}, "-osv, -version and -out are needed"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	for _, left := range []string{"b", "b.partial"} {
		if _, err := os.Stat(filepath.Join(dir, left)); err == nil {
			t.Errorf("a failed build left %s behind", left)
		}
	}
}

// TestFindings reads a govulncheck stream: a vulnerability counts where a call reaches it,
// once per module (one entry reached both in a dependency and in the standard library is in
// both lists), and only a dependency's fails, or the standard library's too with -release.
func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"findings"}, 1},
		{[]string{"findings", "-release"}, 1},
	} {
		in, err := os.Open("testdata/findings.json")
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(tc.args, in, &stdout, &stderr)
		in.Close()
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d; %s%s", tc.args, code, tc.code, stdout.String(), stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{
			"govulncheck v1.9.0, go1.26.8: 1 vulnerabilities reached, 1 in the standard library, 1 in other modules",
			"GO-2026-0001 stdlib@v1.26.8 (fixed in v1.26.9): Crash in example.com/a and net/http\n      net/http.Client.Do, reached from example.com/m.Get\n",
			"GO-2026-0001 example.com/a@v1.1.0 (fixed in v1.2.0): Crash in example.com/a and net/http\n      example.com/a/h2.Conn.Read, reached from example.com/m.Get\n",
			"FAIL: update the modules above",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: output lacks %q:\n%s", tc.args, want, out)
			}
		}
		if strings.Contains(out, "GO-2026-0003") {
			t.Errorf("%q: a vulnerability of a package only imported, never called, is reported:\n%s", tc.args, out)
		}
	}
}

func TestFindingsStandardLibraryOnly(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(readFile(t, "testdata/findings.json"), "\n") {
		if !strings.Contains(l, `"module":"example.com/a"`) {
			lines = append(lines, l)
		}
	}
	stream := strings.Join(lines, "\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"findings"}, strings.NewReader(stream), &stdout, &stderr); code != 0 {
		t.Errorf("the standard library's vulnerabilities alone, without -release: exit %d, want 0:\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"findings", "-release"}, strings.NewReader(stream), &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "FAIL: the standard library of go1.26.8") {
		t.Errorf("the standard library's vulnerabilities alone, with -release: exit %d, want 1:\n%s", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"findings", "-release"}, strings.NewReader(lines[0]), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), ": 0 vulnerabilities reached") {
		t.Errorf("no findings, with -release: exit %d, want 0:\n%s", code, stdout.String())
	}
	if code := run([]string{"findings"}, strings.NewReader("Scanning your code...\n"), &stdout, &stderr); code != 2 {
		t.Errorf("govulncheck's text output: exit %d, want 2", code)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readFile(t, name)), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
