package main

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/ociimage"
)

// The user every image runs as: not root, the number distroless and ko images use, so that a
// volume prepared for one works for the other. A numeric USER lets a runtime check runAsNonRoot
// without reading /etc/passwd.
const (
	nonRootUID = 65532
	nonRootGID = 65532
	user       = "65532:65532"
)

// binDir is where each image holds its command.
const binDir = "/usr/local/bin"

// caBundlePath is where Go's crypto/x509 looks for the system's roots on Linux first.
const caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

// licence is the SPDX identifier of the project's licence, for the images' labels.
const licence = "Apache-2.0"

// spec is one command's image: how the command starts in a container, and what it needs there
// besides the common files.
type spec struct {
	name        string   // the command, ./cmd/<name>, and the image's name
	description string   // org.opencontainers.image.description
	cmd         []string // the default arguments after the entrypoint
	port        string   // where the command listens with those arguments, such as "9631/tcp"
	stateDir    string   // a directory the command writes, owned by the user and declared a volume
	configDir   string   // where a configuration file is mounted
}

// specs are the project's images. Each listens on all of the container's interfaces at the
// port its own documentation names, since a published port reaches the container from outside
// its loopback.
var specs = []spec{
	{
		name:        "labelprinter-exporter",
		description: "Prometheus exporter for label printers",
		port:        "9631/tcp", // the exporter's default --listen, :9631
		configDir:   "/etc/labelprinter-exporter",
	},
	{
		name:        "labelprinter-mqtt",
		description: "bridge between label printers and an MQTT broker",
		cmd:         []string{"--config.file", "/etc/labelprinter-mqtt/bridge.yml", "--web.listen-address", ":9632"},
		port:        "9632/tcp",
		stateDir:    "/var/lib/labelprinter-mqtt",
		configDir:   "/etc/labelprinter-mqtt",
	},
	{
		name:        "printersim",
		description: "simulated label printer speaking the v3 HTTP control contract",
		cmd:         []string{"-addr", ":8631"}, // its default is 127.0.0.1:8631, unreachable from outside a container
		port:        "8631/tcp",
	},
}

// meta is what the images say about the source they were built from.
type meta struct {
	version  string // as the release has it, without a leading v (prometheus/common/version's)
	revision string // the commit
	source   string // the repository's URL
	created  string // RFC 3339, the commit time
}

// image returns the image of s holding the static binary bin and the CA bundle ca.
func (s spec) image(m meta, arch string, bin, ca []byte) (ociimage.Image, error) {
	created, err := time.Parse(time.RFC3339, m.created)
	if err != nil {
		return ociimage.Image{}, err
	}
	dir := func(p string, mode fs.FileMode) ociimage.File {
		return ociimage.File{Path: p, Mode: mode, Dir: true}
	}
	file := func(p string, mode fs.FileMode, data []byte) ociimage.File {
		return ociimage.File{Path: p, Mode: mode, Data: data}
	}
	files := []ociimage.File{
		dir("/etc", 0o755),
		file("/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")),
		file("/etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")),
		dir("/etc/ssl", 0o755),
		dir("/etc/ssl/certs", 0o755),
		file(caBundlePath, 0o644, ca),
		dir("/home", 0o755),
		{Path: "/home/nonroot", Mode: 0o700, UID: nonRootUID, GID: nonRootGID, Dir: true},
		dir("/tmp", 0o777|fs.ModeSticky),
		dir("/usr", 0o755),
		dir("/usr/local", 0o755),
		dir(binDir, 0o755),
		file(binDir+"/"+s.name, 0o755, bin),
	}
	cfg := ociimage.Config{
		User:         user,
		ExposedPorts: map[string]struct{}{s.port: {}},
		Env:          []string{"PATH=" + binDir, "HOME=/home/nonroot"},
		Entrypoint:   []string{binDir + "/" + s.name},
		Cmd:          s.cmd,
		WorkingDir:   "/home/nonroot",
		StopSignal:   "SIGTERM",
		Labels: map[string]string{
			"org.opencontainers.image.title":       s.name,
			"org.opencontainers.image.description": s.description,
			"org.opencontainers.image.version":     m.version,
			"org.opencontainers.image.revision":    m.revision,
			"org.opencontainers.image.source":      m.source,
			"org.opencontainers.image.licenses":    licence,
			"org.opencontainers.image.created":     m.created,
		},
	}
	if s.configDir != "" {
		files = append(files, dir(s.configDir, 0o755))
	}
	if s.stateDir != "" {
		for p := parent(s.stateDir); p != "/"; p = parent(p) {
			if !has(files, p) {
				files = append(files, dir(p, 0o755))
			}
		}
		files = append(files, ociimage.File{Path: s.stateDir, Mode: 0o700, UID: nonRootUID, GID: nonRootGID, Dir: true})
		cfg.Volumes = map[string]struct{}{s.stateDir: {}}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return ociimage.Image{
		Name:         s.name + ":" + m.version,
		OS:           "linux",
		Architecture: arch,
		Created:      created,
		Files:        files,
		Config:       cfg,
	}, nil
}

func parent(p string) string {
	i := strings.LastIndex(p, "/")
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func has(files []ociimage.File, p string) bool {
	for _, f := range files {
		if f.Path == p {
			return true
		}
	}
	return false
}

func specNamed(name string) (spec, error) {
	var names []string
	for _, s := range specs {
		if s.name == name {
			return s, nil
		}
		names = append(names, s.name)
	}
	return spec{}, fmt.Errorf("-images: no image %q; there are %s", name, strings.Join(names, ", "))
}
