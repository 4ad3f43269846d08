// Command apicheck keeps the record of the module's exported API under api/ and checks the code
// against it, as the Go project keeps api/: CI runs it, and a change to an exported identifier
// fails there until the record says it.
//
//	go run ./internal/apicheck            # check (CI's "API compatibility" stage)
//	go run ./internal/apicheck -update    # rewrite api/*.txt for the code as it is
//	go run ./internal/apicheck -release   # at a release: also record the API the next one is compared with
//
// Each package that another module can import (not main, not under internal/) has two files,
// named by its import path with slashes as dashes:
//
//   - api/PATH.txt lists every exported identifier with its type, one per line, sorted: what the
//     code exports now. A change to it, an addition too, fails until -update writes it, so
//     that the diff of every API change is reviewed.
//   - api/PATH.export is the package's API at the last release, export data written by
//     golang.org/x/exp/cmd/apidiff -w (its absolute source paths blanked). apidiff compares the
//     code with it; each incompatible change fails unless CHANGELOG.md's Unreleased section has
//     a "### Breaking" heading under which the change's package and identifier are named in
//     backticks, as `outbox.Store.Open` (package name, or its path inside the module such as
//     `label/preview.ImageResolver`, then apidiff's name with (*T).M written T.M; a removed
//     package is named alone). A package added since the release has no .export yet.
//
// apicheck runs the apidiff named by -apidiff, else $APIDIFF, else the one on PATH; .ci/run
// installs it at a pinned version. -update alone needs only the go command: without apidiff it
// writes the .txt files and leaves the comparison with the release to CI.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// updateCommand is what a failing check tells the user to run.
const updateCommand = "go run ./internal/apicheck -update"

// run executes apicheck with args and returns the exit code: 0 when the code matches the record
// (or the record was written), 1 when it does not, 2 for a bad flag or a tool that failed.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apicheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "the module's root `directory`")
	update := fs.Bool("update", false, "rewrite api/*.txt for the code as it is, then check")
	release := fs.Bool("release", false, "rewrite api/*.txt and api/*.export: the API the next release is compared with")
	apidiff := fs.String("apidiff", os.Getenv("APIDIFF"), "the apidiff `command` (default: $APIDIFF, else apidiff on PATH)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "apicheck: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *apidiff == "" {
		*apidiff = "apidiff"
	}
	// apidiff runs in the module's directory: a relative path is resolved here first.
	p, err := exec.LookPath(*apidiff)
	if err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			*apidiff = abs
		}
	}
	haveApidiff := err == nil
	m, err := loadModule(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "apicheck:", err)
		return 2
	}
	if *update || *release {
		if err := m.write(*apidiff, *release); err != nil {
			fmt.Fprintln(stderr, "apicheck:", err)
			return 2
		}
		if *update && !haveApidiff {
			// The .txt files need only the go command; the comparison with the release is
			// CI's, which installs apidiff.
			fmt.Fprintf(stdout, "apicheck: api/*.txt written for %d packages; without apidiff (%s), incompatible changes are left to CI\n", len(m.pkgs), *apidiff)
			return 0
		}
	}
	problems, err := m.check(*apidiff)
	if err != nil {
		fmt.Fprintln(stderr, "apicheck:", err)
		return 2
	}
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "apicheck: api/ matches the exported API of the %d public packages\n", len(m.pkgs))
		return 0
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	return 1
}
