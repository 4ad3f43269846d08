package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Archive is an image read back from an OCI image-layout archive.
type Archive struct {
	// Index is the layout's index.json.
	Index Index
	// Manifest is the one manifest the index names.
	Manifest Manifest
	// Config is the image configuration the manifest names.
	Config ConfigFile
	// Files are the layer's entries as the tar headers say (paths absolute, "/etc/passwd"), in
	// the layer's order, with the header of each for what File does not hold.
	Files []File
	// Headers are the layer's tar headers, in the same order as Files.
	Headers []*tar.Header
}

// Read reads an archive of one single-platform image, such as Write writes, and checks it as a
// runtime would: every blob's digest and size match its descriptor, the layer's uncompressed
// digest is the configuration's diff ID, and the layout version is 1.0.0. An error says which
// part does not hold.
func Read(r io.Reader) (*Archive, error) {
	blobs := map[string][]byte{}
	var layout, indexJSON []byte
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ociimage: reading the archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("ociimage: reading %s: %w", h.Name, err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		switch {
		case name == "oci-layout":
			layout = b
		case name == "index.json":
			indexJSON = b
		case strings.HasPrefix(name, "blobs/sha256/"):
			blobs["sha256:"+strings.TrimPrefix(name, "blobs/sha256/")] = b
		}
	}
	var l struct {
		ImageLayoutVersion string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(layout, &l); err != nil || l.ImageLayoutVersion != "1.0.0" {
		return nil, fmt.Errorf("ociimage: oci-layout %q: want imageLayoutVersion 1.0.0", layout)
	}
	a := &Archive{}
	if err := json.Unmarshal(indexJSON, &a.Index); err != nil {
		return nil, fmt.Errorf("ociimage: index.json: %w", err)
	}
	if len(a.Index.Manifests) != 1 {
		return nil, fmt.Errorf("ociimage: index.json names %d manifests, want 1", len(a.Index.Manifests))
	}
	blob := func(what string, d Descriptor, mediaType string) ([]byte, error) {
		if d.MediaType != mediaType {
			return nil, fmt.Errorf("ociimage: %s: media type %q, want %q", what, d.MediaType, mediaType)
		}
		b, ok := blobs[d.Digest]
		if !ok {
			return nil, fmt.Errorf("ociimage: %s: blob %s is not in the archive", what, d.Digest)
		}
		if got := sha(b); got != d.Digest || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("ociimage: %s: blob %s holds %d bytes of digest %s, its descriptor says %d", what, d.Digest, len(b), got, d.Size)
		}
		return b, nil
	}
	mb, err := blob("manifest", a.Index.Manifests[0], MediaTypeManifest)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(mb, &a.Manifest); err != nil {
		return nil, fmt.Errorf("ociimage: manifest: %w", err)
	}
	cb, err := blob("config", a.Manifest.Config, MediaTypeConfig)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(cb, &a.Config); err != nil {
		return nil, fmt.Errorf("ociimage: config: %w", err)
	}
	if len(a.Manifest.Layers) != 1 || len(a.Config.RootFS.DiffIDs) != 1 {
		return nil, fmt.Errorf("ociimage: %d layers and %d diff IDs, want 1 of each", len(a.Manifest.Layers), len(a.Config.RootFS.DiffIDs))
	}
	lb, err := blob("layer", a.Manifest.Layers[0], MediaTypeLayer)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(lb))
	if err != nil {
		return nil, fmt.Errorf("ociimage: layer: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("ociimage: layer: %w", err)
	}
	if got := sha(raw); got != a.Config.RootFS.DiffIDs[0] {
		return nil, fmt.Errorf("ociimage: layer: uncompressed digest %s, the config's diff ID is %s", got, a.Config.RootFS.DiffIDs[0])
	}
	lr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ociimage: layer: %w", err)
		}
		data, err := io.ReadAll(lr)
		if err != nil {
			return nil, fmt.Errorf("ociimage: layer: %s: %w", h.Name, err)
		}
		f := File{
			Path: "/" + strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/"),
			Mode: fs.FileMode(h.Mode).Perm(),
			UID:  h.Uid,
			GID:  h.Gid,
			Dir:  h.Typeflag == tar.TypeDir,
		}
		if h.Mode&0o4000 != 0 {
			f.Mode |= fs.ModeSetuid
		}
		if h.Mode&0o2000 != 0 {
			f.Mode |= fs.ModeSetgid
		}
		if h.Mode&0o1000 != 0 {
			f.Mode |= fs.ModeSticky
		}
		if !f.Dir {
			f.Data = data
		}
		a.Files = append(a.Files, f)
		a.Headers = append(a.Headers, h)
	}
	return a, nil
}

// File returns the layer's entry at the absolute path p, or nil.
func (a *Archive) File(p string) *File {
	for i := range a.Files {
		if a.Files[i].Path == p {
			return &a.Files[i]
		}
	}
	return nil
}
