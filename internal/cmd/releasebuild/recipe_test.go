package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testGit is a commit as readGitInfo returns it.
var testGit = gitInfo{
	FullCommit:  "4537da91659e08eda7cf84dd614a7ea1cf89a661",
	ShortCommit: "4537da9",
	Tag:         "v0.9.7",
	Exact:       true,
	CommitDate:  time.Date(2026, 11, 28, 0, 17, 56, 0, time.UTC),
}

func projectRecipe(t *testing.T) *recipe {
	t.Helper()
	r, err := readRecipe(filepath.Join("..", "..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every command under cmd/ is released, for the six platforms, from its own package.
func TestRecipeBuildsEveryCommandForSixPlatforms(t *testing.T) {
	r := projectRecipe(t)
	entries, err := os.ReadDir(filepath.Join("..", "..", "..", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var commands, built []string
	for _, e := range entries {
		if e.IsDir() {
			commands = append(commands, e.Name())
		}
	}
	for _, b := range r.Builds {
		built = append(built, b.ID)
		if b.Main != "./cmd/"+b.ID || b.Binary != b.ID {
			t.Errorf("the build %s builds %s as %s, want ./cmd/%[1]s as %[1]s", b.ID, b.Main, b.Binary)
		}
		goos, goarch := append([]string(nil), b.Goos...), append([]string(nil), b.Goarch...)
		sort.Strings(goos)
		sort.Strings(goarch)
		if !reflect.DeepEqual(goos, []string{"darwin", "linux", "windows"}) || !reflect.DeepEqual(goarch, []string{"amd64", "arm64"}) {
			t.Errorf("the build %s is made for %v x %v, want darwin, linux, windows x amd64, arm64", b.ID, b.Goos, b.Goarch)
		}
	}
	sort.Strings(built)
	if !reflect.DeepEqual(built, commands) {
		t.Errorf("the recipe builds %v; the commands are %v", built, commands)
	}
}

// The go build line for a release is the recipe's, with what makes it reproducible: no
// directory (-trimpath), no build id, the commit's time as build date and file time, and
// the pinned toolchain.
func TestReleaseBuildLine(t *testing.T) {
	r := projectRecipe(t)
	b, err := r.selectBuilds("labelprinter-exporter")
	if err != nil {
		t.Fatal(err)
	}
	f := templateFields(testGit, "0.9.7", map[string]string{"HOME": "/home/builder"})
	c, err := r.goBuild(b[0], target{"linux", "amd64"}, f, []string{"HOME=/home/builder", "GOFLAGS=-buildvcs=false"}, "/out/labelprinter-exporter")
	if err != nil {
		t.Fatal(err)
	}
	const v = "-X github.com/prometheus/common/version."
	want := []string{"go", "build", "-trimpath", "-buildvcs=true",
		"-ldflags=-s -w -buildid= " + v + "Version=0.9.7 " + v + "Revision=4537da91659e08eda7cf84dd614a7ea1cf89a661 " +
			v + "BuildDate=2026-11-28T00:17:56Z",
		"-o", "/out/labelprinter-exporter", "./cmd/labelprinter-exporter"}
	if !reflect.DeepEqual(c.Args, want) {
		t.Errorf("go build line:\n%q\nwant\n%q", c.Args, want)
	}
	// The environment is the builder's, then the recipe's, then the platform's, as goreleaser
	// sets it; the last value of a variable is the one go uses.
	env := environMap(c.Env)
	for k, want := range map[string]string{"GOTOOLCHAIN": "go1.27.3", "CGO_ENABLED": "0", "GOOS": "linux",
		"GOARCH": "amd64", "GOAMD64": "v1", "GOARM64": "", "HOME": "/home/builder"} {
		if got, ok := env[k]; !ok || got != want {
			t.Errorf("%s=%q in the build's environment, want %q", k, got, want)
		}
	}
	if !c.ModTime.Equal(testGit.CommitDate) {
		t.Errorf("the binary's time is %v, want the commit's, %v", c.ModTime, testGit.CommitDate)
	}

	c, err = r.goBuild(b[0], target{"windows", "arm64"}, f, nil, "/out/labelprinter-exporter.exe")
	if err != nil {
		t.Fatal(err)
	}
	if env := environMap(c.Env); env["GOARM64"] != "v8.0" || env["GOAMD64"] != "" || env["GOOS"] != "windows" {
		t.Errorf("windows/arm64's environment: %q", c.Env)
	}
	if _, err := r.goBuild(b[0], target{"linux", "riscv64"}, f, nil, "/out/x"); err == nil {
		t.Error("a platform the recipe does not build was built")
	}
}

// The SBOM command is the recipe's, run in the output directory on the binary's name.
func TestSBOMCommand(t *testing.T) {
	r := projectRecipe(t)
	if len(r.SBOMs) != 1 {
		t.Fatalf("the recipe has %d SBOMs of binaries, want 1", len(r.SBOMs))
	}
	b, _ := r.selectBuilds("printersim")
	f := templateFields(testGit, "0.9.7", nil)
	c, doc, err := r.sbomCommand(r.SBOMs[0], b[0], target{"linux", "amd64"}, f, "/out", "printersim")
	if err != nil {
		t.Fatal(err)
	}
	if doc != "printersim_0.9.7_linux_amd64.cdx.json" {
		t.Errorf("the SBOM is %s", doc)
	}
	want := []string{"go", "run", "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0", "bin", "-json",
		"-std", "-noserial", "-notimestamp", "-output", doc, "printersim"}
	if !reflect.DeepEqual(c.Args, want) {
		t.Errorf("SBOM command:\n%q\nwant\n%q", c.Args, want)
	}
	for _, kv := range c.Env {
		if strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "GOTOOLCHAIN=") {
			t.Errorf("the SBOM command gets %s, which goreleaser does not pass it", kv)
		}
	}
}

// A recipe using what this program does not apply as goreleaser does is refused, naming it,
// rather than built differently from the release.
func TestRecipeRefusesWhatItDoesNotMirror(t *testing.T) {
	base := "snapshot:\n  version_template: x\n"
	for _, tc := range []struct{ yaml, want string }{
		{base + "builds:\n  - id: a\n    main: ./cmd/a\n    binary: a\n    tags: [netgo]\n", "tags"},
		{base + "builds:\n  - id: a\n    main: ./cmd/a\n    binary: a\n    gcflags: [all=-N]\n", "gcflags"},
		{base + "builds:\n  - id: a\n    main: ./cmd/a\n    binary: a\n    overrides: []\n", "overrides"},
		{base + "builds:\n  - id: a\n    main: ./cmd/a\n    binary: a\n    hooks: {pre: [x]}\n", "hooks"},
		{base + "gomod:\n  proxy: true\nbuilds:\n  - id: a\n    main: ./cmd/a\n    binary: a\n", "gomod"},
		{"builds:\n  - id: a\n    main: ./cmd/a\n    binary: a\n", "version_template"},
	} {
		_, err := parseRecipe("r.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "r.yaml") {
			t.Errorf("%q: error %v, want one naming r.yaml and %s", tc.yaml, err, tc.want)
		}
	}
}

// A template field goreleaser gives and this program does not is an error, never empty text.
func TestUnknownTemplateField(t *testing.T) {
	f := templateFields(testGit, "0.9.7", nil)
	if _, err := f.apply("{{ .PreviousTag }}"); err == nil {
		t.Error("an unknown field was rendered")
	}
	if _, err := f.apply("{{ incpatch .Version }}"); err == nil {
		t.Error("an unknown function was rendered")
	}
	got, err := f.apply("{{ .CommitTimestamp }} {{ .ShortCommit }} {{ .Tag }}")
	if err != nil || got != "1795825076 4537da9 v0.9.7" {
		t.Errorf("got %q, %v", got, err)
	}
}

// The version is the tag's for a tagged commit; a release of an untagged one is refused.
func TestVersion(t *testing.T) {
	r := &recipe{SnapshotVersion: "{{ .Version }}-SNAPSHOT-{{ .ShortCommit }}"}
	if v, err := r.version(testGit, false, nil); err != nil || v != "0.9.7" {
		t.Errorf("release of v0.9.7: %q, %v", v, err)
	}
	if v, err := r.version(testGit, true, nil); err != nil || v != "0.9.7-SNAPSHOT-4537da9" {
		t.Errorf("snapshot: %q, %v", v, err)
	}
	untagged := testGit
	untagged.Exact = false
	if _, err := r.version(untagged, false, nil); err == nil || !strings.Contains(err.Error(), "-snapshot") {
		t.Errorf("release of an untagged commit: %v", err)
	}
}
