// Command ociimage builds the container images of labelprinter-exporter, labelprinter-mqtt and
// printersim without a container daemon: for each, a static Linux binary (CGO_ENABLED=0,
// -trimpath, the version, commit and commit time set with the linker as a release sets them),
// a CA bundle, a non-root user, in one layer on no base image, written as an OCI image-layout
// archive that podman, skopeo and crane load. Run it inside the repository:
//
//	go run ./internal/cmd/ociimage -out dist/images -arch amd64
//	podman load -i dist/images/labelprinter-exporter-linux-amd64.oci.tar
//
// Flags:
//
//	-out DIR        where the archives go, NAME-linux-ARCH.oci.tar (required)
//	-arch ARCH      the GOARCH to build for (default: this machine's)
//	-images LIST    comma-separated images to build (default: all three)
//	-version V      the version (default: from git describe, or 0.0.0-<commit time>-<commit>)
//	-revision R     the commit (default: git rev-parse HEAD, with -modified for a changed tree)
//	-created T      the RFC 3339 commit time, the image's and its files' time (default: git's)
//	-source URL     the repository (default: the module's GitHub URL)
//	-ca-bundle F    the PEM CA bundle to put in the images (default: this machine's)
//
// The same commit, toolchain and CA bundle give the same bytes, whatever the directory or time
// of the build. Exit codes: 0 when every image was written, 2 for a bad flag, 1 when a build
// failed.
package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/ociimage"
)

// module is the import path the commands are built from.
const module = "github.com/labelprinter/go-labelprinter"

// versionPackage holds the variables a release sets with the linker (prometheus/common/version's
// conventions, which the commands' --version and build_info read).
const versionPackage = "github.com/prometheus/common/version"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the flags.
type options struct {
	out, arch, images, caBundle string
	meta                        meta
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.out, "out", "", "`directory` to write NAME-linux-ARCH.oci.tar into (required)")
	fs.StringVar(&o.arch, "arch", runtime.GOARCH, "the GOARCH to build for")
	fs.StringVar(&o.images, "images", "", "comma-separated images to build (default: all)")
	fs.StringVar(&o.meta.version, "version", "", "the version (default: from git describe)")
	fs.StringVar(&o.meta.revision, "revision", "", "the commit (default: git rev-parse HEAD)")
	fs.StringVar(&o.meta.created, "created", "", "the RFC 3339 commit time (default: git's)")
	fs.StringVar(&o.meta.source, "source", "https://"+module, "the repository's URL")
	fs.StringVar(&o.caBundle, "ca-bundle", caBundlePath, "the PEM CA bundle to put in the images")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ociimage: takes no arguments, got %q\n", fs.Args())
		return 2
	}
	chosen, ca, err := check(&o)
	if err != nil {
		fmt.Fprintln(stderr, "ociimage:", err)
		return 2
	}
	if err := fillFromGit(ctx, &o.meta); err != nil {
		fmt.Fprintln(stderr, "ociimage:", err)
		return 2
	}
	if _, err := parseTime(o.meta.created); err != nil {
		fmt.Fprintf(stderr, "ociimage: -created %q: %v\n", o.meta.created, err)
		return 2
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintln(stderr, "ociimage: -out:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		fmt.Fprintln(stderr, "ociimage:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	for _, s := range chosen {
		file, digest, err := build(ctx, s, o, ca, tmp)
		if err != nil {
			fmt.Fprintf(stderr, "ociimage: %s: %v\n", s.name, err)
			return 1
		}
		st, err := os.Stat(file)
		if err != nil {
			fmt.Fprintf(stderr, "ociimage: %s: %v\n", s.name, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s %s %d bytes %s\n", file, digest, st.Size(), s.name+":"+o.meta.version)
	}
	return 0
}

// check reads the flags that need no git: the output directory, the architecture, the image
// names and the CA bundle, which must hold at least one certificate.
func check(o *options) ([]spec, []byte, error) {
	if o.out == "" {
		return nil, nil, errors.New("-out is required: the directory to write the archives into")
	}
	if o.arch == "" || strings.ContainsAny(o.arch, "/ ") {
		return nil, nil, fmt.Errorf("-arch %q: want a GOARCH, such as amd64 or arm64", o.arch)
	}
	chosen := specs
	if o.images != "" {
		chosen = nil
		for _, n := range strings.Split(o.images, ",") {
			s, err := specNamed(strings.TrimSpace(n))
			if err != nil {
				return nil, nil, err
			}
			chosen = append(chosen, s)
		}
	}
	ca, err := os.ReadFile(o.caBundle)
	if err != nil {
		return nil, nil, fmt.Errorf("-ca-bundle: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return nil, nil, fmt.Errorf("-ca-bundle %s holds no PEM certificate", o.caBundle)
	}
	return chosen, ca, nil
}

// fillFromGit sets what the flags left empty from the repository the command runs in.
func fillFromGit(ctx context.Context, m *meta) error {
	if m.revision != "" && m.created != "" && m.version != "" {
		return nil
	}
	head, err := git(ctx, "rev-parse", "HEAD")
	if err != nil {
		return fmt.Errorf("-revision, -created or -version not given and git cannot tell them: %w", err)
	}
	if m.revision == "" {
		m.revision = head
		if changed, err := git(ctx, "status", "--porcelain", "--untracked-files=no"); err == nil && changed != "" {
			m.revision += "-modified"
		}
	}
	if m.created == "" {
		ct, err := git(ctx, "log", "-1", "--format=%ct", "HEAD")
		if err != nil {
			return err
		}
		var sec int64
		if _, err := fmt.Sscan(ct, &sec); err != nil {
			return fmt.Errorf("git log: commit time %q: %w", ct, err)
		}
		m.created = time.Unix(sec, 0).UTC().Format(time.RFC3339)
	}
	if m.version == "" {
		if d, err := git(ctx, "describe", "--tags", "--match", "v[0-9]*", "--exact-match", "HEAD"); err == nil {
			m.version = strings.TrimPrefix(d, "v")
		} else {
			// As a Go pseudo-version would say it: no release tag names this commit.
			t, _ := parseTime(m.created)
			m.version = "0.0.0-" + t.UTC().Format("20060102150405") + "-" + head[:12]
		}
	}
	return nil
}

func git(ctx context.Context, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errors.New("want an RFC 3339 time, such as 2026-11-28T00:00:00Z")
	}
	return t, nil
}

// build compiles s's command statically for linux/o.arch and writes its image archive; it
// returns the archive's path and the manifest's digest.
func build(ctx context.Context, s spec, o options, ca []byte, tmp string) (file, digest string, err error) {
	bin := filepath.Join(tmp, s.name)
	ldflags := strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", versionPackage + ".Version=" + o.meta.version,
		"-X", versionPackage + ".Revision=" + o.meta.revision,
		"-X", versionPackage + ".BuildDate=" + o.meta.created,
	}, " ")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, module+"/cmd/"+s.name)
	// GOFLAGS is emptied so that the environment adds nothing to the flags above; version
	// control information is left out (-buildvcs=false) since the linker flags carry the commit.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.arch, "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("go build: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return "", "", err
	}
	if err := static(b); err != nil {
		return "", "", err
	}
	img, err := s.image(o.meta, o.arch, b, ca)
	if err != nil {
		return "", "", err
	}
	var archive bytes.Buffer
	if digest, err = ociimage.Write(&archive, img); err != nil {
		return "", "", err
	}
	// What was written is read back as a runtime would, digests and all.
	if _, err := ociimage.Read(bytes.NewReader(archive.Bytes())); err != nil {
		return "", "", err
	}
	file = filepath.Join(o.out, s.name+"-linux-"+o.arch+".oci.tar")
	if err := os.WriteFile(file, archive.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	return file, digest, nil
}

// static says why the ELF binary b would not run on an image without a C library.
func static(b []byte) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("the binary is not ELF: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("the binary is dynamically linked (it names an interpreter)")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("the binary needs shared libraries %v", libs)
	}
	return nil
}
