package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestGet: the linker's values win; what it left empty comes from the build information; what
// neither gives is said as (devel) or unknown.
func TestGet(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/labelprinter/go-labelprinter", Version: "v0.9.7"},
		Settings: []debug.BuildSetting{
			{Key: "-tags", Value: "netgo"},
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name                                  string
		l                                     linked
		bi                                    *debug.BuildInfo
		version, revision, branch, date, tags string
	}{
		{"nothing", linked{}, nil, "(devel)", "unknown", "", "unknown", "unknown"},
		{"clone without vcs", linked{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)", "unknown", "", "unknown", "unknown"},
		{"build info", linked{}, stamped, "v0.9.7", "0123abcd-modified", "", "2026-11-20T10:00:00Z", "netgo"},
		{"linker", linked{"0.9.8", "feedbeef", "main", "ci@build", "2026-11-21T00:00:00Z"}, stamped, "0.9.8", "feedbeef", "main", "2026-11-21T00:00:00Z", "netgo"},
	} {
		i := get(tc.l, tc.bi)
		if i.Version != tc.version || i.Revision != tc.revision || i.Branch != tc.branch || i.BuildDate != tc.date || i.Tags != tc.tags || i.License != License {
			t.Errorf("%s: got %+v", tc.name, i)
		}
	}
}

// TestPrint: the layout of prometheus/common/version's Print, and the licence.
func TestPrint(t *testing.T) {
	i := Info{Version: "0.9.7", Revision: "feedbeef", Branch: "main", BuildUser: "ci@build", BuildDate: "2026-11-21T00:00:00Z",
		GoVersion: "go1.26.8", GoOS: "linux", GoArch: "arm64", Tags: "unknown", License: "Apache-2.0"}
	want := `prog, version 0.9.7 (branch: main, revision: feedbeef)
  build user:       ci@build
  build date:       2026-11-21T00:00:00Z
  go version:       go1.26.8
  platform:         linux/arm64
  tags:             unknown
  license:          Apache-2.0
`
	if got := i.Print("prog"); got != want {
		t.Errorf("Print:\n%s\nwant:\n%s", got, want)
	}
}

// TestCollector: <namespace>_build_info is 1 with the labels of client_golang's version
// collector.
func TestCollector(t *testing.T) {
	i := Info{Version: "v0.9.7", Revision: "feedbeef", Branch: "main", GoVersion: "go1.26.8", GoOS: "linux", GoArch: "amd64", Tags: "unknown"}
	want := `# HELP prog_build_info 1, labelled with the version, revision and branch the program was built from, the Go version, and the platform and tags of the build.
# TYPE prog_build_info gauge
prog_build_info{branch="main",goarch="amd64",goos="linux",goversion="go1.26.8",revision="feedbeef",tags="unknown",version="v0.9.7"} 1
`
	if err := testutil.CollectAndCompare(i.Collector("prog"), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
