package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: --version and the version command print the build's version, commit, date, Go
// version, platform and licence on stdout and exit 0 without a printer; version takes no
// arguments.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }); code != 0 || stderr.Len() != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
		for _, want := range []string{
			"labelctl, version ", "(branch: ", ", revision: ",
			"\n  build user:", "\n  build date:", "\n  go version:       " + runtime.Version() + "\n",
			"\n  platform:         " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "\n  license:          Apache-2.0\n",
		} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%v lacks %q:\n%s", args, want, stdout.String())
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"version", "extra"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }); code != 2 {
		t.Errorf("version extra: exit %d, want 2; stderr %q", code, stderr.String())
	}
}
