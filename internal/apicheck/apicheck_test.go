package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestParseIncompatible reads apidiff's report: only the lines under "Incompatible changes:".
func TestParseIncompatible(t *testing.T) {
	out := "Incompatible changes:\n- (*Store).Open: removed\n- Version: value changed from \"0.1.0\" to \"0.1.1\"\nCompatible changes:\n- G: added\n"
	got := parseIncompatible([]byte(out))
	if len(got) != 2 || got[0] != (change{"(*Store).Open", "removed"}) || got[1].name != "Version" {
		t.Errorf("parseIncompatible = %q", got)
	}
}

// TestListed: a change is listed only under "### Breaking" of the Unreleased section, named by
// package name, path inside the module or import path, then the identifier (T.M for (*T).M).
func TestListed(t *testing.T) {
	changelog := "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- `preview.Added` is new\n\n### Breaking\n\n" +
		"- `outbox.Store.Open` takes a context; `label/preview.ImageResolver` gives bytes\n- `sparkplug` is gone\n\n" +
		"### Fixed\n\n- `outbox.Fixed`\n\n## [0.1.0] - 2026-11-22\n\n### Breaking\n\n- `outbox.Old`\n"
	file := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(file, []byte(changelog), 0o644); err != nil {
		t.Fatal(err)
	}
	spans, err := readBreaking(file)
	if err != nil {
		t.Fatal(err)
	}
	m := &module{path: "example.com/m", pkgs: []pkg{{"example.com/m/outbox", "outbox"}, {"example.com/m/label/preview", "preview"}, {"example.com/m", "m"}}}
	for _, tc := range []struct {
		path, name string
		want       bool
	}{
		{"example.com/m/outbox", "(*Store).Open", true},
		{"example.com/m/outbox", "Store.Close", false},
		{"example.com/m/outbox", "Old", false},   // a released version's section
		{"example.com/m/outbox", "Fixed", false}, // another heading
		{"example.com/m/label/preview", "ImageResolver", true},
		{"example.com/m/label/preview", "Added", false},
		{"example.com/m/mqttbridge/sparkplug", "", false}, // named by its name, not its path
		{"example.com/m/sparkplug", "", true},
	} {
		if got := m.listed(spans, tc.path, tc.name); got != tc.want {
			t.Errorf("listed(%s, %q) = %v, want %v (spans %q)", tc.path, tc.name, got, tc.want, spans)
		}
	}
}

// apidiffCommand is the apidiff the rules' test runs: $APIDIFF or the one on PATH. Without it
// the test skips, unless LABELPRINTER_REQUIRE_APIDIFF is set (as CI sets it).
func apidiffCommand(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("APIDIFF"); p != "" {
		return p
	}
	if p, err := exec.LookPath("apidiff"); err == nil {
		return p
	}
	if os.Getenv("LABELPRINTER_REQUIRE_APIDIFF") != "" {
		t.Fatal("apidiff not found and LABELPRINTER_REQUIRE_APIDIFF is set; .ci/run installs it")
	}
	t.Skip("apidiff not found: go install golang.org/x/exp/cmd/apidiff@<the version .ci/run pins> and put it on PATH or in $APIDIFF to run this test")
	return ""
}

// TestRules runs apicheck on a small module: an addition fails until -update records it; an
// incompatible change fails until CHANGELOG.md's Unreleased "### Breaking" names it, even once
// the .txt is updated; -release makes the code the new baseline.
func TestRules(t *testing.T) {
	apidiff := apidiffCommand(t)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apicheck := func(wantCode int, wantOut string, flags ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"-C", dir, "-apidiff", apidiff}, flags...), &stdout, &stderr)
		if code != wantCode || !strings.Contains(stdout.String()+stderr.String(), wantOut) {
			t.Fatalf("apicheck %v: exit %d, want %d with %q; stdout:\n%s\nstderr:\n%s", flags, code, wantCode, wantOut, stdout.String(), stderr.String())
		}
	}
	write("go.mod", "module example.com/fix\n\ngo 1.25\n")
	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n## [0.1.0] - 2026-11-22\n")
	write("internal/hidden/h.go", "package hidden\n\nfunc H() {}\n")
	write("empty/e.go", "package empty\n\nfunc e() {}\n")
	write("p/p.go", "package p\n\nimport \"example.com/fix/internal/hidden\"\n\nfunc F() { hidden.H() }\n\ntype T struct{ A int }\n")

	apicheck(0, "api/ matches the exported API of the 2 public packages", "-release")
	if _, err := os.Stat(filepath.Join(dir, "api", "example.com-fix-p.export")); err != nil {
		t.Fatal(err)
	}
	if txt, err := os.ReadFile(filepath.Join(dir, "api", "example.com-fix-empty.txt")); err != nil || string(txt) != "pkg example.com/fix/empty\n" {
		t.Fatalf("api/example.com-fix-empty.txt: %q, %v", txt, err)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "api", "example.com-fix-p.txt"))
	if err != nil || string(txt) != "pkg example.com/fix/p, func F()\npkg example.com/fix/p, type T struct\npkg example.com/fix/p, type T struct, A int\n" {
		t.Fatalf("api/example.com-fix-p.txt: %q, %v", txt, err)
	}

	// A compatible addition: the .txt must say it.
	write("p/p.go", "package p\n\nfunc F() {}\n\nfunc G() {}\n\ntype T struct{ A int }\n")
	apicheck(1, "+ pkg example.com/fix/p, func G()\nrun go run ./internal/apicheck -update to update the api files")
	apicheck(0, "matches", "-update")
	// -update needs no apidiff; the check does.
	write("p/p.go", "package p\n\nfunc F() {}\n\nfunc G() {}\n\nfunc H() {}\n\ntype T struct{ A int }\n")
	var stdout, stderr bytes.Buffer
	missing := filepath.Join(dir, "no-apidiff")
	if code := run([]string{"-C", dir, "-apidiff", missing, "-update"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "api/*.txt written for 2 packages") {
		t.Fatalf("-update without apidiff: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if code := run([]string{"-C", dir, "-apidiff", missing}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "go install golang.org/x/exp/cmd/apidiff") {
		t.Fatalf("check without apidiff: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	// An incompatible change: unlisted, it fails before and after -update.
	write("p/p.go", "package p\n\nfunc G() {}\n\ntype T struct{ A int64 }\n")
	apicheck(1, "incompatible change F: removed; list it as `p.F`")
	apicheck(1, "incompatible change T.A: changed from int to int64; list it as `p.T.A`", "-update")
	// Listed under another heading, it still fails; under Breaking, it passes.
	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Changed\n\n- `p.F` and `p.T.A`\n\n### Breaking\n\n- `p.F` removed\n")
	apicheck(1, "list it as `p.T.A`")
	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n- `p.F` removed; `p.T.A` is an int64\n")
	apicheck(0, "matches")

	// At the release, the code becomes what the next is compared with.
	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-11-28\n\n### Breaking\n\n- `p.F` removed; `p.T.A` is an int64\n")
	apicheck(1, "list it as `p.F`")
	apicheck(0, "matches", "-release")
}
