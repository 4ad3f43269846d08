// Command releasebuild builds the release's commands for one platform exactly as goreleaser
// v2.14.3 builds them from the release recipe, .goreleaser.yaml: the same go build line,
// environment, ldflags and file times, read from the recipe itself, so that CI checks the
// recipe's own flags without building goreleaser. It also makes each binary's SBOM with the
// recipe's command and writes checksums.txt for what it made.
//
//	go run ./internal/cmd/releasebuild -out DIR [-goos linux -goarch amd64] [-ids labelctl,...]
//
// It builds HEAD's commit as checked out in -dir; a build is refused if the binary records
// uncommitted changes or holds the checkout's directory. CI runs it in two copies of a commit
// and compares the bytes (.ci/run's "reproducible build" stage).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "releasebuild:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("releasebuild", flag.ContinueOnError)
	dir := fs.String("dir", ".", "the checkout to build (its HEAD commit, as checked out)")
	recipePath := fs.String("recipe", ".goreleaser.yaml", "the release recipe, relative to -dir")
	out := fs.String("out", "", "the directory to write the binaries, SBOMs and checksums.txt into (required)")
	goos := fs.String("goos", "linux", "the platform's GOOS")
	goarch := fs.String("goarch", "amd64", "the platform's GOARCH")
	ids := fs.String("ids", "", "the recipe's build ids to build, comma-separated (default all)")
	snapshot := fs.Bool("snapshot", true, "build as goreleaser --snapshot does; false needs a tag on HEAD")
	withSBOM := fs.Bool("sbom", true, "make each binary's SBOM with the recipe's command (which must be on PATH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	checkout, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	dist, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	r, err := readRecipe(filepath.Join(checkout, *recipePath))
	if err != nil {
		return err
	}
	builds, err := r.selectBuilds(*ids)
	if err != nil {
		return fmt.Errorf("-ids: %w", err)
	}
	g, err := readGitInfo(ctx, checkout)
	if err != nil {
		return err
	}
	env := environMap(os.Environ())
	version, err := r.version(g, *snapshot, env)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return err
	}
	f := templateFields(g, version, env)
	t := target{*goos, *goarch}

	var made []string
	for _, b := range builds {
		bin := filepath.Join(dist, b.binaryName(t))
		c, err := r.goBuild(b, t, f, os.Environ(), bin)
		if err != nil {
			return err
		}
		if err := c.run(ctx, checkout); err != nil {
			return err
		}
		if err := checkBinary(bin, checkout, g); err != nil {
			return err
		}
		made = append(made, filepath.Base(bin))
		if !*withSBOM {
			continue
		}
		for _, s := range r.SBOMs {
			sc, doc, err := r.sbomCommand(s, b, t, f, dist, filepath.Base(bin))
			if err != nil {
				return err
			}
			if err := sc.run(ctx, dist); err != nil {
				return err
			}
			made = append(made, doc)
		}
	}
	sums, err := checksums(dist, made)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dist, "checksums.txt"), sums, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s/%s of %s (%s)\n", version, t.goos, t.goarch, g.FullCommit, g.CommitDate.Format("2006-01-02T15:04:05Z"))
	for _, name := range made {
		st, err := os.Stat(filepath.Join(dist, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%12d  %s\n", st.Size(), name)
	}
	return nil
}

// selectBuilds returns the builds named in ids (comma-separated), all of them when ids is empty.
func (r *recipe) selectBuilds(ids string) ([]build, error) {
	if ids == "" {
		return r.Builds, nil
	}
	var out []build
	for _, id := range strings.Split(ids, ",") {
		found := false
		for _, b := range r.Builds {
			if b.ID == id {
				out, found = append(out, b), true
			}
		}
		if !found {
			var known []string
			for _, b := range r.Builds {
				known = append(known, b.ID)
			}
			return nil, fmt.Errorf("the recipe has no build %q (it has %s)", id, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// checkBinary refuses a binary that is no release of g's commit: one built from uncommitted
// changes or from another commit, or one that holds the directory it was built in.
func checkBinary(path, checkout string, g gitInfo) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["vcs.revision"] != g.FullCommit {
		return fmt.Errorf("%s records the commit %q, not %s", path, settings["vcs.revision"], g.FullCommit)
	}
	if settings["vcs.modified"] != "false" {
		return fmt.Errorf("%s was built from a checkout with uncommitted changes (vcs.modified=%s)", path, settings["vcs.modified"])
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if bytes.Contains(data, []byte(checkout)) {
		return fmt.Errorf("%s holds the directory it was built in, %s", path, checkout)
	}
	return nil
}

// checksums returns checksums.txt for the files names in dist, as goreleaser writes it:
// "<sha256>  <name>" lines sorted by name.
func checksums(dist string, names []string) ([]byte, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var b bytes.Buffer
	for _, name := range sorted {
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(data), name)
	}
	return b.Bytes(), nil
}

// environMap returns the environment's variables by name.
func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
