package licenses

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDependencyLicenses checks the licence of every module linked into the module's packages
// and commands (go list -deps ./..., the standard library and test-only modules left out)
// against allowed.txt, reading each module's licence files from the module cache.
func TestDependencyLicenses(t *testing.T) {
	allow := readAllowList(t)
	mods := linkedModules(t)
	if len(mods) == 0 {
		t.Fatal("go list -deps ./... named no module besides the standard library and this one")
	}
	errs := Check(mods, allow)
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) == 0 {
		t.Logf("%d modules linked, each under a licence allowed.txt allows", len(mods))
	}
}

func readAllowList(t *testing.T) AllowList {
	t.Helper()
	text, err := os.ReadFile("allowed.txt")
	if err != nil {
		t.Fatal(err)
	}
	allow, err := ParseAllowList(string(text))
	if err != nil {
		t.Fatalf("allowed.txt: %v", err)
	}
	return allow
}

// linkedModules returns the modules other than this one that provide a package the module's
// packages and commands build with, as go list reports them.
func linkedModules(t *testing.T) []Module {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=Standard,Module", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, stderr.Bytes())
	}
	type module struct {
		Path, Version, Dir string
		Main               bool
		Replace            *module
	}
	seen := map[string]bool{}
	var mods []Module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Standard bool
			Module   *module
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if p.Standard || p.Module == nil || p.Module.Main {
			continue
		}
		m := p.Module
		if m.Replace != nil {
			m = m.Replace
		}
		if m.Dir == "" {
			t.Fatalf("go list gave no directory for %s %s: is it in the module cache?", m.Path, m.Version)
		}
		if key := m.Path + "@" + m.Version; !seen[key] {
			seen[key] = true
			mods = append(mods, Module{Path: m.Path, Version: m.Version, Dir: m.Dir})
		}
	}
	return mods
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"../../LICENSE", []string{"Apache-2.0"}},
		{"../../label/gs1/NOTICE", []string{"Apache-2.0"}},
		{"../../label/internal/pdf417/LICENSE", []string{"MIT"}},
		{"testdata/bsd-2-clause.txt", []string{"BSD-2-Clause"}},
		{"testdata/bsd-3-clause.txt", []string{"BSD-3-Clause"}},
		{"testdata/isc.txt", []string{"ISC"}},
		{"testdata/edl-1.0.txt", []string{"EDL-1.0"}},
		{"testdata/epl-2.0.txt", []string{"EPL-2.0"}},
		{"testdata/mpl-2.0.txt", []string{"MPL-2.0"}},
		{"testdata/gpl-3.0.txt", []string{"GPL-3.0"}},
		{"testdata/proprietary.txt", nil},
		// A header naming a licence is not its text.
		{"testdata/apache-header.txt", nil},
	} {
		text, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := Classify(string(text)); !slices.Equal(got, tc.want) {
			t.Errorf("Classify(%s) = %q, want %q", tc.file, got, tc.want)
		}
	}
	// Two licences in one file (a module whose files are under either) are both named; the
	// MIT text quoted in Go comments and rewrapped is still MIT.
	mit, err := os.ReadFile("../../label/internal/pdf417/LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	bsd3, err := os.ReadFile("testdata/bsd-3-clause.txt")
	if err != nil {
		t.Fatal(err)
	}
	both := "// " + strings.ReplaceAll(string(mit), "\n", "\n// ") + "\n\n" + strings.Join(strings.Fields(string(bsd3)), " ")
	if got, want := Classify(both), []string{"MIT", "BSD-3-Clause"}; !slices.Equal(got, want) {
		t.Errorf("Classify(MIT in comments + rewrapped BSD-3-Clause) = %q, want %q", got, want)
	}
}

// TestCheckRefuses runs Check on made-up modules: each with a refused, unknown or missing
// licence is named with what was found, and only those.
func TestCheckRefuses(t *testing.T) {
	allow, err := ParseAllowList("license MIT\nlicense BSD-3-Clause\nexception example.com/taken MPL-2.0 because\nexception example.com/gone MPL-2.0 because\n")
	if err != nil {
		t.Fatal(err)
	}
	mod := func(path, file, sample string) Module {
		dir := t.TempDir()
		if file != "" {
			text, err := os.ReadFile(filepath.Join("testdata", sample))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, file), text, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return Module{Path: path, Version: "v1.0.0", Dir: dir}
	}
	mods := []Module{
		mod("example.com/bsd", "LICENSE", "bsd-3-clause.txt"),
		mod("example.com/mpl", "LICENSE.txt", "mpl-2.0.txt"),
		mod("example.com/gpl", "COPYING", "gpl-3.0.txt"),
		mod("example.com/isc", "LICENSE.md", "isc.txt"), // ISC is not allowed in this list
		mod("example.com/odd", "License", "proprietary.txt"),
		mod("example.com/none", "", ""),
		mod("example.com/taken", "LICENSE", "mpl-2.0.txt"),
	}
	var got []string
	for _, err := range Check(mods, allow) {
		got = append(got, err.Error())
	}
	want := []string{
		"example.com/mpl@v1.0.0: LICENSE.txt is MPL-2.0, which allowed.txt does not allow",
		"example.com/gpl@v1.0.0: COPYING is GPL-3.0, which allowed.txt does not allow",
		"example.com/isc@v1.0.0: LICENSE.md is ISC, which allowed.txt does not allow",
		"example.com/odd@v1.0.0: License holds no licence this check recognises",
		"example.com/none@v1.0.0: no licence file",
		"allowed.txt takes example.com/gone under MPL-2.0, but no linked module needs that exception any more",
	}
	if len(got) != len(want) {
		t.Fatalf("Check found %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want it to start %q", i, got[i], want[i])
		}
	}
}

func TestParseAllowListNamesTheLine(t *testing.T) {
	_, err := ParseAllowList("license MIT\n\nlicence MIT\n")
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "licence MIT") {
		t.Fatalf("ParseAllowList(a misspelt line 3) = %v, want an error naming line 3", err)
	}
}
