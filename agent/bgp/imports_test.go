package bgp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEdgeovnLinksNoGoBGP: the edgeovn binary (and this package) link none of GoBGP, gRPC or
// viper: they belong to the speaker process (cmd/edgeovn-bgp), so that a host without BGP
// pays nothing for them.
func TestEdgeovnLinksNoGoBGP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/edgeovn/edgeovn").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/osrg/gobgp", "google.golang.org/grpc", "github.com/spf13/viper", "agent/bgp/speaker"} {
			if strings.Contains(dep, banned) && !strings.HasSuffix(dep, "agent/bgp/speakerproto") {
				t.Errorf("edgeovn links %s (%s belongs to edgeovn-bgp)", dep, banned)
			}
		}
	}
}
