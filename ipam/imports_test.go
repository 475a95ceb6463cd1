package ipam_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsStayPure keeps the allocator free of side-effecting dependencies, so it stays
// testable without SQLite, OVS or a cluster.
func TestImportsStayPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/edgeovn/edgeovn/ipam").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{"github.com/vishvananda/netlink", "github.com/ovn-org/libovsdb",
		"k8s.io/client-go", "modernc.org/sqlite"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("package ipam depends on %s (via %s)", f, dep)
			}
		}
	}
	if !strings.Contains(string(out), "net/netip") {
		t.Fatalf("go list -deps output looks wrong:\n%s", out)
	}
}
