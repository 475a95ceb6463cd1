package ociimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Media types and annotations of the OCI image spec and containerd.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar"
	// NameAnnotation is what containerd names an imported image by.
	NameAnnotation = "io.containerd.image.name"
	refAnnotation  = "org.opencontainers.image.ref.name"
)

// epoch is every file's modification time, so that images are reproducible.
var epoch = time.Unix(0, 0).UTC()

// runtimeDirs are created empty in the layer: runc mounts proc, sysfs and /dev over them, and
// the runtime writes /etc/hosts, /etc/hostname and /etc/resolv.conf there.
var runtimeDirs = []string{"dev", "etc", "proc", "sys", "tmp"}

// Request describes one image.
type Request struct {
	// Name is the full image reference, such as "edgeovn.local/pause:1"; it must have a tag.
	Name string
	// Binary is the path of the static executable the image runs.
	Binary string
	// Entrypoint is where the binary lives in the image, such as "/pause".
	Entrypoint string
	// Args are the image's default arguments (Cmd).
	Args []string
	// Output is the tar file to write.
	Output string
	// Arch is the binary's architecture (GOARCH); empty means this machine's.
	Arch string
	// Files are more files in the layer: other programs, or names linked to one.
	Files []File
	// Env is the image's environment (PATH=..., say); empty leaves it to the runtime.
	Env []string
}

// File is one more file in an image's layer: a copy of a file on this machine (Source), or a
// symbolic link (Link), at Path.
type File struct {
	// Path is the absolute path in the image, such as "/bin/sh".
	Path string
	// Source is the file on this machine whose bytes it gets (mode 0755).
	Source string
	// Link is the symbolic link's target, such as "/bin/toolbox", when Source is empty.
	Link string
}

// entry is a file of the layer with its content read.
type entry struct {
	path string
	data []byte
	link string
}

func (r Request) validate() error {
	var errs []error
	name, tag, ok := strings.Cut(path.Base(r.Name), ":")
	if r.Name == "" || !ok || name == "" || tag == "" {
		errs = append(errs, fmt.Errorf("image name %q must be a reference with a tag, such as edgeovn.local/pause:1", r.Name))
	}
	if !path.IsAbs(r.Entrypoint) || path.Clean(r.Entrypoint) != r.Entrypoint || r.Entrypoint == "/" {
		errs = append(errs, fmt.Errorf("entrypoint %q must be a clean absolute file path", r.Entrypoint))
	}
	if r.Binary == "" || r.Output == "" {
		errs = append(errs, fmt.Errorf("binary %q and output %q must both be set", r.Binary, r.Output))
	}
	seen := map[string]bool{r.Entrypoint: true}
	for _, f := range r.Files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			errs = append(errs, fmt.Errorf("file path %q must be a clean absolute file path", f.Path))
		}
		if seen[f.Path] {
			errs = append(errs, fmt.Errorf("file path %q is in the image twice", f.Path))
		}
		seen[f.Path] = true
		if (f.Source == "") == (f.Link == "") {
			errs = append(errs, fmt.Errorf("file %q: exactly one of source %q and link %q must be set", f.Path, f.Source, f.Link))
		}
	}
	return errors.Join(errs...)
}

// entries reads the layer's files: the entrypoint's binary first, then Files.
func (r Request) entries() ([]entry, error) {
	bin, err := os.ReadFile(r.Binary)
	if err != nil {
		return nil, err
	}
	out := []entry{{path: r.Entrypoint, data: bin}}
	for _, f := range r.Files {
		e := entry{path: f.Path, link: f.Link}
		if f.Source != "" {
			if e.data, err = os.ReadFile(f.Source); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// blob is content addressed by its digest in blobs/sha256/.
type blob struct {
	desc descriptor
	data []byte
}

func newBlob(mediaType string, data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{desc: descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}, data: data}
}

func jsonBlob(mediaType string, v any) (blob, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return blob{}, fmt.Errorf("encode %s: %w", mediaType, err)
	}
	return newBlob(mediaType, b), nil
}

// Write writes the image described by req as an OCI layout tar and returns its manifest's
// digest. An invalid request writes nothing.
func Write(req Request) (string, error) {
	if err := req.validate(); err != nil {
		return "", fmt.Errorf("write image: %w", err)
	}
	files, err := req.entries()
	if err != nil {
		return "", fmt.Errorf("write image %s: %w", req.Name, err)
	}
	arch := req.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	blobs, index, err := image(req, files, arch)
	if err != nil {
		return "", fmt.Errorf("write image %s: %w", req.Name, err)
	}
	if err := writeTarAtomic(req.Output, blobs, index); err != nil {
		return "", fmt.Errorf("write image %s to %s: %w", req.Name, req.Output, err)
	}
	return index.Manifests[0].Digest, nil
}

type indexDoc struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// image builds the layer, config and manifest blobs and the index that names the image.
func image(req Request, files []entry, arch string) ([]blob, indexDoc, error) {
	layerData, err := layerTar(files)
	if err != nil {
		return nil, indexDoc{}, err
	}
	layer := newBlob(mediaLayer, layerData)
	config, err := jsonBlob(mediaConfig, map[string]any{
		"architecture": arch,
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config":       map[string]any{"Entrypoint": []string{req.Entrypoint}, "Cmd": req.Args, "Env": req.Env},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layer.desc.Digest}},
	})
	if err != nil {
		return nil, indexDoc{}, err
	}
	manifest, err := jsonBlob(mediaManifest, map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        config.desc,
		"layers":        []descriptor{layer.desc},
	})
	if err != nil {
		return nil, indexDoc{}, err
	}
	entry := manifest.desc
	entry.Platform = &platform{Architecture: arch, OS: "linux"}
	_, tag, _ := strings.Cut(path.Base(req.Name), ":")
	entry.Annotations = map[string]string{NameAnnotation: req.Name, refAnnotation: tag}
	index := indexDoc{SchemaVersion: 2, MediaType: mediaIndex, Manifests: []descriptor{entry}}
	return []blob{layer, config, manifest}, index, nil
}

// layerTar is the image's one layer: the runtime's mount points, the files' directories and
// the files, each directory before what it holds.
func layerTar(files []entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, d := range runtimeDirs {
		dirs[d] = true
	}
	for _, f := range files {
		for d := path.Dir(strings.TrimPrefix(f.path, "/")); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) { // parents before their children
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
	}
	for _, f := range files {
		if err := writeEntry(tw, f); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

func writeEntry(tw *tar.Writer, f entry) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.path, "/"), Mode: 0o755, Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatPAX}
	if f.link != "" {
		hdr.Typeflag, hdr.Linkname, hdr.Size, hdr.Mode = tar.TypeSymlink, f.link, 0, 0o777
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(f.data)
	return err
}

// writeTarAtomic writes the layout (oci-layout, index.json, blobs) into a temporary file
// beside out and renames it into place.
func writeTarAtomic(out string, blobs []blob, index indexDoc) error {
	idx, err := json.Marshal(index)
	if err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	tw := tar.NewWriter(tmp)
	files := []struct {
		name string
		data []byte
	}{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}, {"index.json", idx}}
	for _, b := range blobs {
		files = append(files, struct {
			name string
			data []byte
		}{"blobs/sha256/" + strings.TrimPrefix(b.desc.Digest, "sha256:"), b.data})
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			tmp.Close()
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			tmp.Close()
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := errors.Join(tw.Close(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
