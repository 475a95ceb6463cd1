package northbound

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"testing"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func TestPortIndexFollowsRowVersions(t *testing.T) {
	var x portIndex
	v1 := sw("s1", "p1", "p2")
	for i := range 3 { // the first answer is a scan, the next ones the version's set
		if !x.holds(v1, "p2") || x.holds(v1, "p3") {
			t.Fatalf("question %d on version 1: wrong answer", i+1)
		}
	}
	if x.bySwitch["s1"].ports == nil {
		t.Fatal("no set built for a version asked about three times")
	}
	// The cache stored a new row: p2 moved away, p3 came. The old version's set must not answer.
	v2 := sw("s1", "p1", "p3")
	for i := range 3 {
		if x.holds(v2, "p2") || !x.holds(v2, "p3") {
			t.Fatalf("question %d on version 2: answered from version 1", i+1)
		}
	}
	other := sw("s2", "p2")
	if !x.holds(other, "p2") {
		t.Fatal("s2 holds p2")
	}
	x.forget([]*nbdb.LogicalSwitch{v2})
	if _, ok := x.bySwitch["s2"]; ok || x.bySwitch["s1"] == nil {
		t.Fatalf("forget kept %v, want s1 only", x.bySwitch)
	}
}

// A re-sync of a port that is already right copies no switch: what it allocates does not grow
// with the switch's ports (before the index, two copies of the switch per re-sync, each with a
// reference to every port: 64 kB and more here).
func TestResyncCopiesNoSwitch(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	const ports = 2000
	for start := 0; start < ports; start += 200 {
		var specs []PodPortSpec
		for i := start; i < start+200; i++ {
			specs = append(specs, manyPod(i))
		}
		f.mustWrite(t, 1, "create ports", func() error { return f.c.EnsurePodPorts(f.ctx, specs) })
	}
	const runs = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range runs {
		if err := f.c.EnsurePodPort(f.ctx, manyPod(i*7%ports)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / runs
	// One copy of the switch holds a 16-byte string header per port.
	if oneCopy := uint64(ports * 16); perCall >= oneCopy/2 {
		t.Fatalf("a re-sync allocated %d bytes with %d ports on the switch: it copies the switch (one copy: %d bytes)", perCall, ports, oneCopy)
	}
	if f.c.writes.Load() != ports/200+2 {
		t.Fatalf("%d write transactions, want %d: a re-sync wrote", f.c.writes.Load(), ports/200+2)
	}
}

// A port moved after its switch's version was indexed is found on its new switch only.
func TestMoveAfterIndexed(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	other := SubnetSpec{Name: "s2", Router: "ovn-cluster",
		CIDR: netip.MustParsePrefix("10.50.0.0/24"), Gateway: netip.MustParseAddr("10.50.0.1")}
	f.mustWrite(t, 1, "ensure subnet s2", func() error { return f.c.EnsureSubnet(f.ctx, other) })
	f.mustWrite(t, 1, "create pod port", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("ovn-default", "10.42.0.5")) })
	for i := range 3 {
		f.mustWrite(t, 0, fmt.Sprintf("re-sync %d", i+1), func() error { return f.c.EnsurePodPort(f.ctx, podSpec("ovn-default", "10.42.0.5")) })
	}
	f.mustWrite(t, 1, "move pod port", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("s2", "10.50.0.5")) })
	f.mustWrite(t, 0, "re-sync on s2", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("s2", "10.50.0.5")) })
	got, ok, err := f.c.PodPort(f.ctx, "web.default")
	if err != nil || !ok || got.Switch != "s2" {
		t.Fatalf("PodPort after move = %+v, %v, %v", got, ok, err)
	}
	f.mustWrite(t, 0, "stale delete", func() error { return f.c.DeletePodPort(f.ctx, "ovn-default", "web.default") })
	f.mustWrite(t, 1, "move back", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("ovn-default", "10.42.0.5")) })
	lsp, err := f.c.switchPortByName(f.ctx, "web.default")
	if err != nil || lsp == nil {
		t.Fatalf("port after moving back: %v, %v", lsp, err)
	}
	holders, err := f.c.switchesHolding(f.ctx, lsp.UUID)
	if err != nil || len(holders) != 1 || holders[0].Name != "ovn-default" {
		t.Fatalf("holders after moving back: %v, %v", holders, err)
	}
	f.mustWrite(t, 1, "delete", func() error { return f.c.DeletePodPort(f.ctx, "ovn-default", "web.default") })
}

// sw is a switch row as the cache would hold it (a new pointer per version).
func sw(uuid string, ports ...string) *nbdb.LogicalSwitch {
	return &nbdb.LogicalSwitch{UUID: uuid, Name: uuid, Ports: ports}
}

func manyPod(i int) PodPortSpec {
	return PodPortSpec{Switch: "ovn-default", Name: fmt.Sprintf("p%d.many", i),
		MAC:   net.HardwareAddr{0x0a, 0x58, 0x0a, 0x2a, byte(i >> 8), byte(i)},
		IPs:   []netip.Addr{netip.AddrFrom4([4]byte{10, 42, byte(1 + i>>8), byte(i)})},
		Owner: fmt.Sprintf("many/p%d", i)}
}
