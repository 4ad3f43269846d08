package main

import (
	"bytes"
	"context"
	"regexp"
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
		"labelprinter-exporter, version ", "(branch: ", ", revision: ",
		"\n  build user:", "\n  build date:", "\n  go version:       " + runtime.Version() + "\n",
		"\n  platform:         " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "\n  license:          Apache-2.0\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--version lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestBuildInfoMetric: /metrics has labelprinter_exporter_build_info 1 with the labels of
// client_golang's version collector.
func TestBuildInfoMetric(t *testing.T) {
	h := newHarness(t, nil)
	_, _, metrics := h.get("/metrics")
	re := regexp.MustCompile(`(?m)^labelprinter_exporter_build_info\{branch="[^"]*",goarch="` + runtime.GOARCH +
		`",goos="` + runtime.GOOS + `",goversion="` + regexp.QuoteMeta(runtime.Version()) + `",revision="[^"]+",tags="[^"]*",version="[^"]+"\} 1$`)
	if !re.MatchString(metrics) {
		t.Errorf("/metrics lacks labelprinter_exporter_build_info (want %s):\n%s", re, metrics)
	}
}
