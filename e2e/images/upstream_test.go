package images

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestToolLinksAreToolboxTools: every name the images link to the toolbox is one the toolbox
// acts as (it lists them when run without arguments), and it acts as no other.
func TestToolLinksAreToolboxTools(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "toolbox")
	if err := goBuild(context.Background(), "github.com/edgeovn/edgeovn/e2e/images/toolbox", bin); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(bin).CombinedOutput() // exits 2 with its usage
	_, list, ok := strings.Cut(strings.TrimSpace(string(out)), "tools: ")
	if !ok {
		t.Fatalf("toolbox usage lacks its tool list: %q", out)
	}
	have := strings.Fields(list)
	want := slices.Sorted(slices.Values(toolNames))
	if !slices.Equal(have, want) {
		t.Fatalf("toolbox acts as %v; the images link %v", have, want)
	}
}

// TestBuildUpstreamRefusesRelativePaths: a request with a relative path names it and builds
// nothing.
func TestBuildUpstreamRefusesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	_, err := BuildUpstream(context.Background(), UpstreamRequest{Dir: dir, Agnhost: "agnhost", AgnhostSource: dir, CoreDNS: filepath.Join(dir, "coredns")})
	if err == nil || !strings.Contains(err.Error(), `agnhost binary "agnhost"`) {
		t.Fatalf("got %v, want an error naming the agnhost binary", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Fatalf("a refused request left %v", m)
	}
}
