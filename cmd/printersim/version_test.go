package main

import (
	"bytes"
	"context"
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
