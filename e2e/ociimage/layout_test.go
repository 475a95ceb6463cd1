package ociimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readTar returns the files of a tar by name.
func readTar(t *testing.T, data []byte) map[string]*tarFile {
	t.Helper()
	out := map[string]*tarFile{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = &tarFile{hdr: h, data: b}
	}
}

type tarFile struct {
	hdr  *tar.Header
	data []byte
}

func blobOf(t *testing.T, files map[string]*tarFile, d descriptor) []byte {
	t.Helper()
	f := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
	if f == nil {
		t.Fatalf("blob %s missing", d.Digest)
	}
	sum := sha256.Sum256(f.data)
	if "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(f.data)) != d.Size {
		t.Fatalf("blob %s: content does not match its descriptor (size %d, want %d)", d.Digest, len(f.data), d.Size)
	}
	return f.data
}

func TestWriteLayout(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "srv")
	if err := os.WriteFile(bin, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	req := Request{Name: "edgeovn.local/testserver:1", Binary: bin, Entrypoint: "/bin/testserver", Args: []string{"-port", "8080"}, Output: filepath.Join(dir, "img.tar"), Arch: "amd64"}
	digest, err := Write(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(req.Output)
	if err != nil {
		t.Fatal(err)
	}
	files := readTar(t, raw)
	if f := files["oci-layout"]; f == nil || !strings.Contains(string(f.data), `"imageLayoutVersion":"1.0.0"`) {
		t.Fatalf("oci-layout missing or wrong: %v", f)
	}
	var idx indexDoc
	if err := json.Unmarshal(files["index.json"].data, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != digest {
		t.Fatalf("index %+v, want one manifest %s", idx, digest)
	}
	entry := idx.Manifests[0]
	if entry.Annotations[NameAnnotation] != req.Name || entry.Annotations[refAnnotation] != "1" || entry.Platform.Architecture != "amd64" {
		t.Fatalf("index entry %+v lacks the name annotation, tag or platform", entry)
	}
	var m struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blobOf(t, files, entry), &m); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		OS     string `json:"os"`
		Config struct{ Entrypoint, Cmd []string }
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blobOf(t, files, m.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || strings.Join(cfg.Config.Entrypoint, " ") != "/bin/testserver" || strings.Join(cfg.Config.Cmd, " ") != "-port 8080" {
		t.Fatalf("config %+v", cfg)
	}
	if len(m.Layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != m.Layers[0].Digest {
		t.Fatalf("layers %+v, diff ids %v: want one uncompressed layer whose diff id is its digest", m.Layers, cfg.RootFS.DiffIDs)
	}
	layer := readTar(t, blobOf(t, files, m.Layers[0]))
	f := layer["bin/testserver"]
	if f == nil || string(f.data) != "\x7fELF not really" || f.hdr.Mode != 0o755 {
		t.Fatalf("layer lacks the executable at bin/testserver: %v", layer)
	}
	for _, d := range append([]string{"bin/"}, "proc/", "dev/", "etc/") {
		if layer[d] == nil || layer[d].hdr.Typeflag != tar.TypeDir {
			t.Errorf("layer lacks directory %s", d)
		}
	}

	again, err := Write(req)
	if err != nil || again != digest {
		t.Fatalf("second write gave %s, %v; want the same digest %s", again, err, digest)
	}
}

// TestWriteRefusesBadRequests: a bad request names what is wrong and leaves an existing
// output file as it was.
func TestWriteRefusesBadRequests(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "img.tar")
	if err := os.WriteFile(out, []byte("previous image"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Name: "edgeovn.local/pause", Binary: bin, Entrypoint: "/pause", Output: out}, "must be a reference with a tag"},
		{Request{Name: "edgeovn.local/pause:1", Binary: bin, Entrypoint: "pause", Output: out}, `entrypoint "pause"`},
		{Request{Name: "edgeovn.local/pause:1", Binary: bin, Entrypoint: "/a/../pause", Output: out}, "clean absolute"},
		{Request{Name: "edgeovn.local/pause:1", Binary: filepath.Join(dir, "missing"), Entrypoint: "/pause", Output: out}, "missing"},
		{Request{Name: "edgeovn.local/pause:1", Binary: bin, Entrypoint: "/pause", Output: out, Files: []File{{Path: "/pause", Link: "/x"}}}, `"/pause" is in the image twice`},
		{Request{Name: "edgeovn.local/pause:1", Binary: bin, Entrypoint: "/pause", Output: out, Files: []File{{Path: "/bin/sh", Source: bin, Link: "/pause"}}}, "exactly one of source"},
		{Request{Name: "edgeovn.local/pause:1", Binary: bin, Entrypoint: "/pause", Output: out, Files: []File{{Path: "bin/sh", Link: "/pause"}}}, `file path "bin/sh"`},
		{Request{Name: "edgeovn.local/pause:1", Binary: bin, Entrypoint: "/pause", Output: out, Files: []File{{Path: "/tool", Source: filepath.Join(dir, "gone")}}}, "gone"},
	} {
		_, err := Write(tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Write(%+v) = %v, want an error containing %q", tc.req, err, tc.want)
		}
		if b, _ := os.ReadFile(out); string(b) != "previous image" {
			t.Fatalf("a refused request changed %s", out)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".img.tar.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestWriteFilesAndLinks: more programs and links to them land in the layer with their
// directories, and the environment in the config.
func TestWriteFilesAndLinks(t *testing.T) {
	dir := t.TempDir()
	bin, tool := filepath.Join(dir, "agnhost"), filepath.Join(dir, "toolbox")
	for f, data := range map[string]string{bin: "agnhost", tool: "toolbox"} {
		if err := os.WriteFile(f, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	req := Request{Name: "registry.k8s.io/e2e-test-images/agnhost:2.56", Binary: bin, Entrypoint: "/agnhost", Output: filepath.Join(dir, "img.tar"),
		Env:   []string{"PATH=/usr/bin:/bin"},
		Files: []File{{Path: "/bin/toolbox", Source: tool}, {Path: "/bin/sh", Link: "/bin/toolbox"}, {Path: "/usr/bin/curl", Link: "/bin/toolbox"}}}
	if _, err := Write(req); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(req.Output)
	if err != nil {
		t.Fatal(err)
	}
	files := readTar(t, raw)
	var idx indexDoc
	if err := json.Unmarshal(files["index.json"].data, &idx); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blobOf(t, files, idx.Manifests[0]), &m); err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Config struct{ Env []string } }
	if err := json.Unmarshal(blobOf(t, files, m.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Config.Env, " ") != "PATH=/usr/bin:/bin" {
		t.Fatalf("config env %v, want the request's", cfg.Config.Env)
	}
	layer := readTar(t, blobOf(t, files, m.Layers[0]))
	if f := layer["agnhost"]; f == nil || string(f.data) != "agnhost" {
		t.Fatalf("layer lacks the entrypoint: %v", layer)
	}
	if f := layer["bin/toolbox"]; f == nil || string(f.data) != "toolbox" || f.hdr.Mode != 0o755 {
		t.Fatalf("layer lacks bin/toolbox as an executable copy of its source")
	}
	for _, l := range []string{"bin/sh", "usr/bin/curl"} {
		if f := layer[l]; f == nil || f.hdr.Typeflag != tar.TypeSymlink || f.hdr.Linkname != "/bin/toolbox" {
			t.Fatalf("layer lacks %s as a link to /bin/toolbox: %+v", l, f)
		}
	}
	for _, d := range []string{"bin/", "usr/", "usr/bin/"} {
		if layer[d] == nil || layer[d].hdr.Typeflag != tar.TypeDir {
			t.Errorf("layer lacks directory %s", d)
		}
	}
}
