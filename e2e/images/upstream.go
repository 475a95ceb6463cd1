package images

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/edgeovn/edgeovn/e2e/ociimage"
)

// The upstream e2e framework's images (k8s.io/kubernetes/test/utils/image, v1.34), under
// exactly the names it asks for: imported beforehand, they are never pulled (its pods take
// the default pull policy, IfNotPresent). `e2e.test --list-images` names them all.
const (
	Agnhost        = "registry.k8s.io/e2e-test-images/agnhost:2.56"
	JessieDNSUtils = "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7"
	BusyBox        = "registry.k8s.io/e2e-test-images/busybox:1.37.0-1"
	UpstreamPause  = "registry.k8s.io/pause:3.10.1"
)

// CoreDNS is the cluster DNS's image, around the cached CoreDNS build (build-coredns.sh).
const CoreDNS = "edgeovn.local/coredns:1.12.4"

// toolboxPath is where the toolbox lives in the images; every tool name links to it.
const toolboxPath = "/bin/toolbox"

// toolNames are the names the toolbox acts as (its own list, e2e/images/toolbox).
var toolNames = []string{"sh", "curl", "nc", "wget", "dig", "getent", "nslookup", "grep", "cat", "hostname", "seq", "sleep", "timeout"}

// imagePath is the PATH the images set, as the upstream images' base (Alpine, Debian) has it.
const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// UpstreamRequest says where the upstream images' binaries come from.
type UpstreamRequest struct {
	// Dir receives the tars and the binaries built for them.
	Dir string
	// Agnhost is the agnhost binary (k8s.io/kubernetes/test/images/agnhost, build-kube.sh).
	Agnhost string
	// AgnhostSource is that package's directory: the image carries porter's test certificate
	// and key from it (/localhost.crt, /localhost.key), as the upstream Dockerfile adds them.
	AgnhostSource string
	// CoreDNS is the CoreDNS binary (build-coredns.sh).
	CoreDNS string
}

func (r UpstreamRequest) validate() error {
	var errs []error
	for what, p := range map[string]string{"dir": r.Dir, "agnhost binary": r.Agnhost, "agnhost source": r.AgnhostSource, "coredns binary": r.CoreDNS} {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("%s %q is not an absolute path", what, p))
		}
	}
	return errors.Join(errs...)
}

// BuildUpstream writes the images the upstream sig-network tests run, built from Go programs:
// agnhost (the upstream binary, with the toolbox as its shell and tools, as the upstream
// image's Alpine base has them, and porter's test certificate), jessie-dnsutils and busybox (the toolbox: sh, dig, getent,
// wget, ...), the framework's pause image (this package's pause), and CoreDNS. It returns the
// tars' paths.
func BuildUpstream(ctx context.Context, req UpstreamRequest) ([]string, error) {
	if err := req.validate(); err != nil {
		return nil, fmt.Errorf("build upstream images: %w", err)
	}
	toolbox, pause := filepath.Join(req.Dir, "toolbox"), filepath.Join(req.Dir, "pause")
	for pkg, out := range map[string]string{"github.com/edgeovn/edgeovn/e2e/images/toolbox": toolbox, "github.com/edgeovn/edgeovn/e2e/images/pause": pause} {
		if err := goBuild(ctx, pkg, out); err != nil {
			return nil, fmt.Errorf("build upstream images: %w", err)
		}
	}
	links := toolLinks()
	reqs := []ociimage.Request{
		{Name: Agnhost, Binary: req.Agnhost, Entrypoint: "/agnhost", Args: []string{"pause"}, Env: []string{imagePath},
			Files: append([]ociimage.File{{Path: toolboxPath, Source: toolbox},
				{Path: "/localhost.crt", Source: filepath.Join(req.AgnhostSource, "porter", "localhost.crt")},
				{Path: "/localhost.key", Source: filepath.Join(req.AgnhostSource, "porter", "localhost.key")}}, links...)},
		{Name: JessieDNSUtils, Binary: toolbox, Entrypoint: toolboxPath, Args: []string{"sh"}, Env: []string{imagePath}, Files: links},
		{Name: BusyBox, Binary: toolbox, Entrypoint: toolboxPath, Args: []string{"sh"}, Env: []string{imagePath}, Files: links},
		{Name: UpstreamPause, Binary: pause, Entrypoint: "/pause"},
		{Name: CoreDNS, Binary: req.CoreDNS, Entrypoint: "/coredns", Args: []string{"-conf", "/etc/coredns/Corefile"}},
	}
	var tars []string
	for i, r := range reqs {
		r.Output = filepath.Join(req.Dir, fmt.Sprintf("upstream-%d.tar", i))
		if _, err := ociimage.Write(r); err != nil {
			return nil, fmt.Errorf("build upstream images: %w", err)
		}
		tars = append(tars, r.Output)
	}
	return tars, nil
}

// toolLinks links each tool's name in /bin to the toolbox.
func toolLinks() []ociimage.File {
	var out []ociimage.File
	for _, n := range toolNames {
		out = append(out, ociimage.File{Path: "/bin/" + n, Link: toolboxPath})
	}
	return out
}
