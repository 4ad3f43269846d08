package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionFlag: --version prints the build's version, commit, date, Go version, platform and
// licence on stdout and exits 0 without serving.
func TestVersionFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("--version: exit %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{
		"printersim, version ", "(branch: ", ", revision: ",
		"\n  build user:", "\n  build date:", "\n  go version:       " + runtime.Version() + "\n",
		"\n  platform:         " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "\n  license:          Apache-2.0\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--version lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestVersionLinkerFlags builds the command as a release does, with the version, commit, branch,
// build user and date set through prometheus/common/version's variables, and reads them back.
func TestVersionLinkerFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build printersim with")
	}
	bin := filepath.Join(t.TempDir(), "printersim")
	const pkg = "github.com/prometheus/common/version."
	ldflags := "-X " + pkg + "Version=9.8.7 -X " + pkg + "Revision=0123456789abcdef -X " + pkg + "Branch=release-9.8" +
		" -X " + pkg + "BuildUser=builder@ci -X " + pkg + "BuildDate=2026-11-20T10:00:00Z"
	if out, err := exec.Command(goCmd, "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		t.Fatalf("printersim -version: %v", err)
	}
	for _, want := range []string{
		"printersim, version 9.8.7 (branch: release-9.8, revision: 0123456789abcdef)\n",
		"\n  build user:       builder@ci\n", "\n  build date:       2026-11-20T10:00:00Z\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-version lacks %q:\n%s", want, out)
		}
	}
}
