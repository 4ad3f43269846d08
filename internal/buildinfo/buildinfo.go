// Package buildinfo says which build of a command is running: its version, the commit and date
// it was built from, the Go version and the licence, for every command's --version and for the
// exporter's and the bridge's build_info metric, so all four say it alike.
//
// A release sets the values with the linker, as Prometheus's projects do:
//
//	-X github.com/prometheus/common/version.Version=0.9.7
//	-X github.com/prometheus/common/version.Revision=<commit>
//	-X github.com/prometheus/common/version.Branch=<branch>
//	-X github.com/prometheus/common/version.BuildUser=<user@host>
//	-X github.com/prometheus/common/version.BuildDate=<RFC 3339 commit time>
//
// A value the linker did not set is taken from the build information the go command records:
// the module's version (v0.9.7 for "go install ...@v0.9.7", "(devel)" for a build from a
// clone), vcs.revision and vcs.time (when the build stamped version control information).
package buildinfo

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"
)

// unknown stands for a value neither the linker nor the build information gave.
const unknown = "unknown"

// Info describes one build of a command.
type Info struct {
	Version   string // the release's version, or the module's; "(devel)" for a build from a clone
	Revision  string // the commit, with "-modified" when the work tree had changes; or "unknown"
	Branch    string // set only by a release's linker flags
	BuildUser string // set only by a release's linker flags
	BuildDate string // RFC 3339; the commit time when only version control information gave it
	GoVersion string // the Go toolchain that built it
	GoOS      string
	GoArch    string
	Tags      string // the build tags, or "unknown"
	License   string // the SPDX identifier of the licence the command is distributed under
}

// linked holds what the linker set in prometheus/common/version's variables.
type linked struct{ version, revision, branch, buildUser, buildDate string }

// Get returns the running program's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return get(linked{version.Version, version.Revision, version.Branch, version.BuildUser, version.BuildDate}, bi)
}

// get merges the linker's values with the build information bi (nil when the binary has
// none); a value the linker set wins.
func get(l linked, bi *debug.BuildInfo) Info {
	i := Info{
		Version: l.version, Revision: l.revision, Branch: l.branch, BuildUser: l.buildUser, BuildDate: l.buildDate,
		GoVersion: runtime.Version(), GoOS: runtime.GOOS, GoArch: runtime.GOARCH, Tags: unknown, License: License,
	}
	var rev, vcsTime string
	modified := false
	if bi != nil {
		if i.Version == "" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "-tags":
				i.Tags = s.Value
			}
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	if i.Revision == "" {
		i.Revision = unknown
		if rev != "" {
			i.Revision = rev
			if modified {
				i.Revision += "-modified"
			}
		}
	}
	if i.BuildDate == "" {
		i.BuildDate = unknown
		if vcsTime != "" {
			i.BuildDate = vcsTime
		}
	}
	return i
}

// Print returns program's version in prometheus/common/version's layout, with a line for the
// licence: what each command's --version prints.
func (i Info) Print(program string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, version %s (branch: %s, revision: %s)\n", program, i.Version, i.Branch, i.Revision)
	fmt.Fprintf(&b, "  build user:       %s\n", i.BuildUser)
	fmt.Fprintf(&b, "  build date:       %s\n", i.BuildDate)
	fmt.Fprintf(&b, "  go version:       %s\n", i.GoVersion)
	fmt.Fprintf(&b, "  platform:         %s/%s\n", i.GoOS, i.GoArch)
	fmt.Fprintf(&b, "  tags:             %s\n", i.Tags)
	fmt.Fprintf(&b, "  license:          %s\n", i.License)
	return b.String()
}

// Collector returns the gauge <namespace>_build_info, 1, labelled as prometheus/client_golang's
// version collector labels it (version, revision, branch, goversion, goos, goarch, tags).
func (i Info) Collector(namespace string) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "build_info",
		Help:      "1, labelled with the version, revision and branch the program was built from, the Go version, and the platform and tags of the build.",
		ConstLabels: prometheus.Labels{
			"version": i.Version, "revision": i.Revision, "branch": i.Branch,
			"goversion": i.GoVersion, "goos": i.GoOS, "goarch": i.GoArch, "tags": i.Tags,
		},
	}, func() float64 { return 1 })
}

// VersionFlag registers --version on fs: the commands built on package flag take it alike.
func VersionFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("version", false, "print the version, the commit and date it was built from, the Go version and the licence, then exit")
}
