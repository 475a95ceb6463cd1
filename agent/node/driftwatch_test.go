package node

import (
	"context"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestWatchNftablesSeesFlush: `nft flush ruleset` wakes the drift loop at once (it deletes
// edgeovn's masquerade table with everything else), not at the next timer tick.
func TestWatchNftablesSeesFlush(t *testing.T) {
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root for a network namespace and nftables")
	}
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close(); _ = testutils.UnmountNS(n) })
	nft := func(args ...string) {
		if out, err := exec.Command("nsenter", append([]string{"--net=" + n.Path(), "nft"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("nft %v: %v\n%s", args, err, out)
		}
	}
	nft("add", "table", "ip", "edgeovn")
	var pokes atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := n.Do(func(ns.NetNS) error { return watchNftables(ctx, func() { pokes.Add(1) }) }); err != nil {
		t.Fatal(err)
	}
	nft("flush", "ruleset")
	for deadline := time.Now().Add(10 * time.Second); pokes.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nft flush ruleset: no event reached the drift loop")
		}
	}
}
