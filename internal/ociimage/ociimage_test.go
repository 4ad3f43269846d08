package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var created = time.Date(2026, 11, 27, 23, 29, 25, 0, time.UTC)

func sample() Image {
	return Image{
		Name:         "thing:1.2.3",
		OS:           "linux",
		Architecture: "arm64",
		Created:      created,
		Files: []File{
			{Path: "/usr/local/bin/thing", Mode: 0o755, Data: []byte("\x7fELF not really")},
			{Path: "/usr", Mode: 0o755, Dir: true},
			{Path: "/usr/local", Mode: 0o755, Dir: true},
			{Path: "/usr/local/bin", Mode: 0o755, Dir: true},
			{Path: "/tmp", Mode: 0o777 | fs.ModeSticky, Dir: true},
			{Path: "/var", Mode: 0o755, Dir: true},
			{Path: "/var/state", Mode: 0o700, UID: 65532, GID: 65532, Dir: true},
		},
		Config: Config{
			User:         "65532:65532",
			ExposedPorts: map[string]struct{}{"9631/tcp": {}},
			Entrypoint:   []string{"/usr/local/bin/thing"},
			Cmd:          []string{"--listen", ":9631"},
			Labels:       map[string]string{"org.opencontainers.image.version": "1.2.3"},
		},
	}
}

// TestWriteRead: an archive holds the layout, index, manifest, config and layer a runtime
// reads, each blob under its digest, and the layer's entries as given, sorted, with the image's
// time, their owners and modes, and no user or group names.
func TestWriteRead(t *testing.T) {
	var buf bytes.Buffer
	digest, err := Write(&buf, sample())
	if err != nil {
		t.Fatal(err)
	}
	a, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if a.Index.Manifests[0].Digest != digest || a.Index.Manifests[0].Annotations[RefNameAnnotation] != "thing:1.2.3" ||
		a.Index.Manifests[0].Platform == nil || a.Index.Manifests[0].Platform.Architecture != "arm64" {
		t.Errorf("index: %+v, want the manifest %s named thing:1.2.3 for arm64", a.Index.Manifests, digest)
	}
	c := a.Config
	if c.OS != "linux" || c.Architecture != "arm64" || !c.Created.Equal(created) || c.Config.User != "65532:65532" ||
		strings.Join(c.Config.Entrypoint, " ") != "/usr/local/bin/thing" || strings.Join(c.Config.Cmd, " ") != "--listen :9631" {
		t.Errorf("config: %+v", c)
	}
	if _, ok := c.Config.ExposedPorts["9631/tcp"]; !ok || c.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
		t.Errorf("config: ports %v, labels %v", c.Config.ExposedPorts, c.Config.Labels)
	}
	var paths []string
	for i, f := range a.Files {
		paths = append(paths, f.Path)
		h := a.Headers[i]
		if !h.ModTime.Equal(created) || h.Uname != "" || h.Gname != "" || !h.AccessTime.IsZero() || !h.ChangeTime.IsZero() {
			t.Errorf("%s: header %+v: want the image's time and no names or other times", f.Path, h)
		}
	}
	if got := strings.Join(paths, " "); got != "/tmp /usr /usr/local /usr/local/bin /usr/local/bin/thing /var /var/state" {
		t.Errorf("layer entries %s, want them sorted, directories first", got)
	}
	if f := a.File("/usr/local/bin/thing"); f == nil || f.Mode != 0o755 || f.UID != 0 || string(f.Data) != "\x7fELF not really" {
		t.Errorf("the binary: %+v", f)
	}
	if f := a.File("/var/state"); f == nil || !f.Dir || f.Mode != 0o700 || f.UID != 65532 || f.GID != 65532 {
		t.Errorf("the state directory: %+v", f)
	}
	if f := a.File("/tmp"); f == nil || f.Mode != 0o777|fs.ModeSticky {
		t.Errorf("/tmp: %+v, want 1777", f)
	}
}

// TestWriteReproducible: the same image gives the same bytes, whatever the order its files
// are given in and whenever it is written; another time gives another digest.
func TestWriteReproducible(t *testing.T) {
	var a, b, c bytes.Buffer
	img := sample()
	da, err := Write(&a, img)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(img.Files)-1; i < j; i, j = i+1, j-1 {
		img.Files[i], img.Files[j] = img.Files[j], img.Files[i]
	}
	db, err := Write(&b, img)
	if err != nil {
		t.Fatal(err)
	}
	if da != db || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("two writes of one image differ: %s, %s", da, db)
	}
	img.Created = created.Add(time.Second)
	dc, err := Write(&c, img)
	if err != nil {
		t.Fatal(err)
	}
	if dc == da {
		t.Errorf("another creation time gave the same digest %s", dc)
	}
	// The layer's gzip header carries no time or name of its own.
	ar, err := Read(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	layer := blobOf(t, a.Bytes(), ar.Manifest.Layers[0].Digest)
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("the layer's gzip header holds time %v, name %q", zr.ModTime, zr.Name)
	}
}

// TestWriteRefuses: bad input is an error naming what is wrong, before anything is written.
func TestWriteRefuses(t *testing.T) {
	for _, c := range []struct {
		change func(*Image)
		want   string
	}{
		{func(i *Image) { i.Files[0].Path = "usr/local/bin/thing" }, `file path "usr/local/bin/thing": want a clean absolute path`},
		{func(i *Image) { i.Files[0].Path = "/usr/local/../bin/thing" }, `want a clean absolute path`},
		{func(i *Image) { i.Files = append(i.Files, File{Path: "/usr", Mode: 0o755, Dir: true}) }, `"/usr" is given twice`},
		{func(i *Image) { i.Files = append(i.Files, File{Path: "/etc/passwd", Mode: 0o644}) }, `/etc/passwd: its directory /etc is not among the files`},
		{func(i *Image) { i.Files[0].Mode |= fs.ModeSymlink }, `only permission bits are taken`},
		{func(i *Image) { i.Created = time.Time{} }, `Created is required`},
		{func(i *Image) { i.Architecture = "" }, `OS and Architecture are required`},
		{func(i *Image) { i.Name = "" }, `Name is required`},
	} {
		img := sample()
		c.change(&img)
		var buf bytes.Buffer
		_, err := Write(&buf, img)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one saying %q", err, c.want)
		}
		if buf.Len() != 0 {
			t.Errorf("%q: %d bytes written before the error", c.want, buf.Len())
		}
	}
}

// TestReadChecksDigests: a blob changed after it was written, or an index naming a blob the
// archive lacks, is refused as a runtime would refuse it.
func TestReadChecksDigests(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Write(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	a, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	cfgDigest := a.Manifest.Config.Digest
	changed := rewrite(t, buf.Bytes(), func(name string, data []byte) []byte {
		if strings.HasSuffix(name, strings.TrimPrefix(cfgDigest, "sha256:")) {
			return bytes.Replace(data, []byte("65532:65532"), []byte("0:0:0:0:000"), 1)
		}
		return data
	})
	if _, err := Read(bytes.NewReader(changed)); err == nil || !strings.Contains(err.Error(), "config: blob "+cfgDigest) {
		t.Errorf("a changed config: %v", err)
	}
	missing := rewrite(t, buf.Bytes(), func(name string, data []byte) []byte {
		if name == "index.json" {
			var ix Index
			if err := json.Unmarshal(data, &ix); err != nil {
				t.Fatal(err)
			}
			ix.Manifests[0].Digest = "sha256:" + strings.Repeat("0", 64)
			b, _ := json.Marshal(ix)
			return b
		}
		return data
	})
	if _, err := Read(bytes.NewReader(missing)); err == nil || !strings.Contains(err.Error(), "is not in the archive") {
		t.Errorf("an index naming a missing manifest: %v", err)
	}
}

// rewrite copies an archive, passing each regular file's content through f.
func rewrite(t *testing.T, archive []byte, f func(name string, data []byte) []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(archive)), tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if h.Typeflag == tar.TypeReg {
			data = f(h.Name, data)
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func blobOf(t *testing.T, archive []byte, digest string) []byte {
	t.Helper()
	var found []byte
	rewrite(t, archive, func(name string, data []byte) []byte {
		if name == blobPath(digest) {
			found = data
		}
		return data
	})
	if found == nil {
		t.Fatalf("no blob %s", digest)
	}
	return found
}
