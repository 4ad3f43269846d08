// Command vulncheck is the CI's govulncheck stage's helper, on the standard library alone.
//
//	vulncheck index -osv DIR -version VERSION -out DIR
//
// builds a vulnerability database in the layout govulncheck's -db file:// reads (index/db.json,
// index/modules.json, ID/<id>.json) from the OSV entries of the golang.org/x/vulndb module at
// VERSION (its data/osv), so that the stage needs no network once the module is downloaded.
//
//	govulncheck -format json ./... | vulncheck findings [-release]
//
// says which vulnerabilities the module's code reaches (calls), the standard library's apart
// from the other modules', and exits 1 when a module other than the standard library has one.
// The standard library's fail too with -release, for a scan under the toolchain releases are
// built with; without it they are reported only, being fixed by a newer Go than the one
// scanning, not by the module.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = "usage: vulncheck index -osv DIR -version VERSION -out DIR | vulncheck findings [-release] < govulncheck.json"

// run is main with its arguments and streams given, returning the exit code: 0 done, 1 a
// vulnerability the code reaches fails the check, 2 a mistake in the arguments or a failure.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "index":
		fs := flag.NewFlagSet("vulncheck index", flag.ContinueOnError)
		fs.SetOutput(stderr)
		osvDir := fs.String("osv", "", "directory of OSV entries, <id>.json each (the vulndb module's data/osv)")
		version := fs.String("version", "", "the golang.org/x/vulndb module's version the entries are from (a pseudo-version: its time is the database's)")
		out := fs.String("out", "", "directory to write the database to; must not exist")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if *osvDir == "" || *version == "" || *out == "" || fs.NArg() > 0 {
			fmt.Fprintln(stderr, "vulncheck index: -osv, -version and -out are needed, and nothing else")
			return 2
		}
		n, err := buildIndex(*osvDir, *version, *out)
		if err != nil {
			fmt.Fprintln(stderr, "vulncheck index:", err)
			return 2
		}
		fmt.Fprintf(stdout, "%d entries of golang.org/x/vulndb %s in %s\n", n, *version, *out)
		return 0
	case "findings":
		fs := flag.NewFlagSet("vulncheck findings", flag.ContinueOnError)
		fs.SetOutput(stderr)
		release := fs.Bool("release", false, "the scan ran under the toolchain releases are built with: the standard library's vulnerabilities fail too")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if fs.NArg() > 0 {
			fmt.Fprintln(stderr, "vulncheck findings takes no arguments but -release; it reads govulncheck -format json on its standard input")
			return 2
		}
		r, err := readFindings(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "vulncheck findings:", err)
			return 2
		}
		r.write(stdout)
		switch {
		case len(r.modules) > 0:
			fmt.Fprintln(stdout, "FAIL: update the modules above (go get MODULE@FIXED) or remove the calls that reach them")
			return 1
		case *release && len(r.std) > 0:
			fmt.Fprintf(stdout, "FAIL: the standard library of %s, the toolchain releases are built with, has the vulnerabilities above: move to a Go release that fixes them\n", r.goVersion)
			return 1
		}
		return 0
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
}
