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
		if err := goBuild(ctx, p.pkg, bin); err != nil {
			return nil, fmt.Errorf("build image %s: %w", p.name, err)
		}
		tar := filepath.Join(dir, base+".tar")
		if _, err := ociimage.Write(ociimage.Request{Name: p.name, Binary: bin, Entrypoint: p.entrypoint, Output: tar}); err != nil {
			return nil, err
		}
		tars = append(tars, tar)
	}
	return tars, nil
}

// goBuild compiles a static binary of this module's package pkg to out.
func goBuild(ctx context.Context, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
