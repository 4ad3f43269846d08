// Command ociimage makes the container images of labelprinter-exporter, labelprinter-mqtt and
// printersim from a release's Linux binaries, without a container daemon: each holds its
// command, a CA bundle and a non-root user in one layer on no base image, written as an OCI
// image-layout archive that podman, skopeo and crane load. The binaries are those the release
// recipe builds, made for one platform by internal/cmd/releasebuild (or taken from
// goreleaser's dist), so that an image runs exactly the release's binary:
//
//	go run ./internal/cmd/releasebuild -goarch amd64 -ids labelprinter-exporter,labelprinter-mqtt,printersim -sbom=false -out dist/linux-amd64
//	go run ./internal/cmd/ociimage -binaries dist/linux-amd64 -version VERSION -out dist/images
//	podman load -i dist/images/labelprinter-exporter-linux-amd64.oci.tar
//
// Flags:
//
//	-binaries DIR   the release's linux binaries, named as the commands (required)
//	-version V      the version they were built as, the first word releasebuild prints (required)
//	-out DIR        where the archives go, NAME-linux-ARCH.oci.tar (required)
//	-images LIST    comma-separated images to make (default: all three)
//	-source URL     the repository (default: the module's GitHub URL)
//	-ca-bundle F    the PEM CA bundle to put in the images (default: this machine's)
//
// The platform, the commit and its time come from the binaries (the build information the go
// command recorded), and are refused unless the binaries are static Linux executables of one
// architecture, built from one commit without uncommitted changes, holding the version given.
// The same binaries and CA bundle give the same bytes, whatever the directory or time.
// Exit codes: 0 when every image was written, 2 for a bad flag or binary, 1 when an archive
// cannot be written.
package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/ociimage"
)

// module is the import path the commands are built from.
const module = "github.com/labelprinter/go-labelprinter"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the flags.
type options struct {
	binaries, out, images, caBundle string
	meta                            meta
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.binaries, "binaries", "", "`directory` holding the release's linux binaries, named as the commands (required)")
	fs.StringVar(&o.meta.version, "version", "", "the version the binaries were built as, the first word releasebuild prints (required)")
	fs.StringVar(&o.out, "out", "", "`directory` to write NAME-linux-ARCH.oci.tar into (required)")
	fs.StringVar(&o.images, "images", "", "comma-separated images to make (default: all)")
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
	bins, arch, err := readBinaries(o.binaries, chosen, &o.meta)
	if err != nil {
		fmt.Fprintln(stderr, "ociimage:", err)
		return 2
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintln(stderr, "ociimage: -out:", err)
		return 1
	}
	for i, s := range chosen {
		if ctx.Err() != nil {
			return 1
		}
		img, err := s.image(o.meta, arch, bins[i], ca)
		if err != nil {
			fmt.Fprintf(stderr, "ociimage: %s: %v\n", s.name, err)
			return 1
		}
		file, digest, size, err := write(o.out, img, s.name+"-linux-"+arch+".oci.tar")
		if err != nil {
			fmt.Fprintf(stderr, "ociimage: %s: %v\n", s.name, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s %s %d bytes %s\n", file, digest, size, img.Name)
	}
	return 0
}

// check reads the flags that need no binary: the directories, the version, the image names
// and the CA bundle, which must hold at least one certificate.
func check(o *options) ([]spec, []byte, error) {
	if o.binaries == "" {
		return nil, nil, errors.New("-binaries is required: the directory releasebuild -out (or goreleaser) wrote the linux binaries into")
	}
	if o.meta.version == "" {
		return nil, nil, errors.New("-version is required: the version the binaries were built as, the first word releasebuild prints")
	}
	if o.out == "" {
		return nil, nil, errors.New("-out is required: the directory to write the archives into")
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

// machines are the architectures an image is made for, by the ELF machine of its binary.
var machines = map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}

// readBinaries reads the chosen commands from dir, checks each, and sets m's revision and
// creation time from their build information; it returns them and their architecture.
func readBinaries(dir string, chosen []spec, m *meta) ([][]byte, string, error) {
	var bins [][]byte
	arch := ""
	for _, s := range chosen {
		path := filepath.Join(dir, s.name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("-binaries: %w", err)
		}
		a, err := static(b)
		if err != nil {
			return nil, "", fmt.Errorf("-binaries: %s: %w", path, err)
		}
		if arch != "" && a != arch {
			return nil, "", fmt.Errorf("-binaries: %s is for %s, the others for %s", path, a, arch)
		}
		arch = a
		rev, created, err := commit(b)
		if err != nil {
			return nil, "", fmt.Errorf("-binaries: %s: %w", path, err)
		}
		if m.revision != "" && (rev != m.revision || created != m.created) {
			return nil, "", fmt.Errorf("-binaries: %s is of commit %s, the others of %s", path, rev, m.revision)
		}
		m.revision, m.created = rev, created
		// The version the linker set is a string of the binary's data; it is not in the build
		// information, from which -trimpath leaves the linker flags out.
		if !bytes.Contains(b, []byte(m.version)) {
			return nil, "", fmt.Errorf("-version %s: %s does not hold it; give the version the binaries were built as", m.version, path)
		}
		bins = append(bins, b)
	}
	return bins, arch, nil
}

// commit returns the commit and the RFC 3339 commit time the go command recorded in b, which
// must be a build of a commit without uncommitted changes.
func commit(b []byte) (revision, created string, err error) {
	info, err := buildinfo.Read(bytes.NewReader(b))
	if err != nil {
		return "", "", err
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["vcs.revision"] == "" || settings["vcs.time"] == "" {
		return "", "", errors.New("records no commit (built without -buildvcs=true, or outside a git checkout): not a release build")
	}
	if settings["vcs.modified"] != "false" {
		return "", "", errors.New("was built from a checkout with uncommitted changes: not a release build")
	}
	t, err := time.Parse(time.RFC3339, settings["vcs.time"])
	if err != nil {
		return "", "", fmt.Errorf("vcs.time %q: %w", settings["vcs.time"], err)
	}
	return settings["vcs.revision"], t.UTC().Format(time.RFC3339), nil
}

// write writes img as name in dir, after reading it back as a runtime would, digests and all;
// it returns the file, the manifest's digest and the archive's size.
func write(dir string, img ociimage.Image, name string) (file, digest string, size int, err error) {
	var archive bytes.Buffer
	if digest, err = ociimage.Write(&archive, img); err != nil {
		return "", "", 0, err
	}
	if _, err := ociimage.Read(bytes.NewReader(archive.Bytes())); err != nil {
		return "", "", 0, err
	}
	file = filepath.Join(dir, name)
	if err := os.WriteFile(file, archive.Bytes(), 0o644); err != nil {
		return "", "", 0, err
	}
	return file, digest, archive.Len(), nil
}

// static returns the architecture of the ELF binary b, or says why it would not run on an
// image without a C library.
func static(b []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("not an ELF executable: %w", err)
	}
	arch, ok := machines[f.Machine]
	if !ok {
		return "", fmt.Errorf("for ELF machine %v, not amd64 or arm64", f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("dynamically linked (it names an interpreter): build it with CGO_ENABLED=0")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return "", fmt.Errorf("needs shared libraries %v: build it with CGO_ENABLED=0", libs)
	}
	return arch, nil
}
