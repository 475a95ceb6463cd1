package node

import (
	"testing"
	"time"
)

func TestPortmapProbe(t *testing.T) {
	p := startPortmapProbe(func() string { return portmapNFTables })
	if got := p.get(10 * time.Second); got != portmapNFTables {
		t.Fatalf("probe that ended: %q, want %q", got, portmapNFTables)
	}
	// A probe stuck behind the xtables lock: no backend meanwhile, the result once it ends.
	release := make(chan struct{})
	stuck := startPortmapProbe(func() string { <-release; return portmapIPTables })
	if got := stuck.get(10 * time.Millisecond); got != "" {
		t.Fatalf("probe still running: %q, want none", got)
	}
	close(release)
	if got := stuck.get(10 * time.Second); got != portmapIPTables {
		t.Fatalf("probe that ended late: %q, want %q", got, portmapIPTables)
	}
}
