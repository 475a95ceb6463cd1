package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/edgeovn/edgeovn/e2e/ociimage"
)

// The images' names: nothing resolves edgeovn.local, so a pull could never succeed and a pod
// runs only what was imported (imagePullPolicy Never).
const (
	Pause      = "edgeovn.local/pause:1"
	TestServer = "edgeovn.local/testserver:1"
)

// TestServer's ports (its defaults).
const (
	TestServerPort     = 8080 // TCP and UDP
	TestServerHTTPPort = 8081
)

// program is one image's source and where its binary goes in the image.
type program struct {
	pkg, name, entrypoint string
}

var programs = []program{
	{"github.com/edgeovn/edgeovn/e2e/images/pause", Pause, "/pause"},
	{"github.com/edgeovn/edgeovn/e2e/images/testserver", TestServer, "/testserver"},
}

// Build compiles the pause and testserver programs (static, from this module; the caller's
// working directory must be inside it) and writes each as an OCI layout tar into dir. It
// returns the tars' paths, pause first.
func Build(ctx context.Context, dir string) ([]string, error) {
	var tars []string
	for _, p := range programs {
		base := filepath.Base(p.entrypoint)
		bin := filepath.Join(dir, base)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, p.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build image %s: go build %s: %w\n%s", p.name, p.pkg, err, out)
		}
		tar := filepath.Join(dir, base+".tar")
		if _, err := ociimage.Write(ociimage.Request{Name: p.name, Binary: bin, Entrypoint: p.entrypoint, Output: tar}); err != nil {
			return nil, err
		}
		tars = append(tars, tar)
	}
	return tars, nil
}
