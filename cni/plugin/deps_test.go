package plugin

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestBinaryStaysThin keeps the CNI binary free of the daemon's heavy dependencies: it runs
// for every pod and must start in milliseconds.
func TestBinaryStaysThin(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		skip.Now(t, "go tool not on PATH")
	}
	forbidden := []string{
		"k8s.io/client-go",
		"github.com/ovn-org/libovsdb",
		"modernc.org/sqlite",
		"github.com/vishvananda/netlink",
		// net/http's client links TLS, x509 and HTTP/2 and costs every exec start-up time:
		// the binary speaks HTTP/1.0 by hand (exchange.go).
		"net/http",
		"crypto/tls",
	}
	for _, pkg := range []string{"github.com/edgeovn/edgeovn/cni/plugin", "github.com/edgeovn/edgeovn/cni/cmd/edgeovn-cni"} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
