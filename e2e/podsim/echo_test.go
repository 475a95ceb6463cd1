package podsim

import (
	"context"
	"net/netip"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
)

// TestReachAllInProcess: the in-process probe sees a neighbour answer over IPv4 and IPv6,
// two probes in one namespace at once each see their own answers, and an address nobody holds
// never counts as reached.
func TestReachAllInProcess(t *testing.T) {
	a, b := newTestNS(t), newTestNS(t)
	ipCmd(t, "link", "add", "eA", "netns", nsName(a), "type", "veth", "peer", "name", "eB", "netns", nsName(b))
	for n, end := range map[ns.NetNS]struct{ dev, v4, v6 string }{a: {"eA", "10.99.0.1/24", "fd99::1/64"}, b: {"eB", "10.99.0.2/24", "fd99::2/64"}} {
		ipCmd(t, "-n", nsName(n), "addr", "add", end.v4, "dev", end.dev)
		ipCmd(t, "-n", nsName(n), "addr", "add", end.v6, "dev", end.dev, "nodad")
		ipCmd(t, "-n", nsName(n), "link", "set", end.dev, "up")
	}
	sb := &Sandbox{Netns: a.Path()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, dst := range []string{"10.99.0.2", "fd99::2"} {
		wg.Go(func() {
			if ReachAll(ctx, sb, netip.MustParseAddr(dst)).IsZero() {
				t.Errorf("%s never answered the probe", dst)
			}
		})
	}
	wg.Wait()

	short, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	for _, dst := range []string{"10.99.0.3", "fd99::3"} {
		if at := ReachAll(short, sb, netip.MustParseAddr("10.99.0.2"), netip.MustParseAddr(dst)); !at.IsZero() {
			t.Errorf("%s, which nobody holds, reported reached at %v", dst, at)
		}
	}
}

func newTestNS(t *testing.T) ns.NetNS {
	t.Helper()
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatalf("new netns: %v", err)
	}
	t.Cleanup(func() { n.Close(); _ = testutils.UnmountNS(n) })
	return n
}

func nsName(n ns.NetNS) string { return filepath.Base(n.Path()) }

func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
}
