package nbbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

// Batch is the number of ports per transaction in the batched benchmarks.
const Batch = 100

var quiet = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))

// setup starts a server, connects, and ensures the cluster and a /8 subnet "ovn-default".
func setup(b *testing.B) (*northbound.Client, *ovsdbtest.Server) {
	b.Helper()
	srv := ovsdbtest.Start(b, ovsdbtest.SchemaPath(b, "ovn-nb.ovsschema"))
	c := connect(b, srv)
	ctx := context.Background()
	cluster := northbound.ClusterSpec{Router: "ovn-cluster", JoinSwitch: "join",
		JoinCIDR: netip.MustParsePrefix("100.64.0.0/16"), JoinGateway: netip.MustParseAddr("100.64.0.1")}
	if err := c.EnsureCluster(ctx, cluster); err != nil {
		b.Fatal(err)
	}
	err := c.EnsureSubnet(ctx, northbound.SubnetSpec{Name: "ovn-default", Router: "ovn-cluster",
		CIDR: netip.MustParsePrefix("10.0.0.0/8"), Gateway: netip.MustParseAddr("10.0.0.1")})
	if err != nil {
		b.Fatal(err)
	}
	return c, srv
}

func connect(b *testing.B, srv *ovsdbtest.Server) *northbound.Client {
	b.Helper()
	c, err := northbound.Connect(context.Background(), ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}, Log: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// Pod returns pod port i of ovn-default (i < 2^24).
func Pod(i int) northbound.PodPortSpec {
	return northbound.PodPortSpec{
		Switch: "ovn-default",
		Name:   fmt.Sprintf("p%d.bench", i),
		MAC:    net.HardwareAddr{0x0a, 0x58, 0x0a, byte(i >> 16), byte(i >> 8), byte(i)},
		IPs:    []netip.Addr{netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).Next().Next()},
		Owner:  fmt.Sprintf("bench/p%d", i),
	}
}

// createPorts creates ports [from, to) in transactions of Batch ports.
func createPorts(b *testing.B, c *northbound.Client, from, to int) {
	b.Helper()
	for start := from; start < to; start += Batch {
		specs := make([]northbound.PodPortSpec, 0, Batch)
		for i := start; i < min(start+Batch, to); i++ {
			specs = append(specs, Pod(i))
		}
		if err := c.EnsurePodPorts(context.Background(), specs); err != nil {
			b.Fatal(err)
		}
	}
}

// PortCreateSingle creates one pod port per transaction.
func PortCreateSingle(b *testing.B) {
	c, _ := setup(b)
	b.ResetTimer()
	for i := range b.N {
		if err := c.EnsurePodPort(context.Background(), Pod(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ports/s")
}

// PortCreateBatched creates pod ports Batch per transaction; one op is one port.
func PortCreateBatched(b *testing.B) {
	c, _ := setup(b)
	b.ResetTimer()
	createPorts(b, c, 0, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ports/s")
}

// ClusterAnd50Subnets runs EnsureCluster and 50 EnsureSubnet on a fresh router per op.
func ClusterAnd50Subnets(b *testing.B) {
	srv := ovsdbtest.Start(b, ovsdbtest.SchemaPath(b, "ovn-nb.ovsschema"))
	c := connect(b, srv)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		router := fmt.Sprintf("r%d", i)
		spec := northbound.ClusterSpec{Router: router, JoinSwitch: fmt.Sprintf("join%d", i),
			JoinCIDR: netip.MustParsePrefix("100.64.0.0/16"), JoinGateway: netip.MustParseAddr("100.64.0.1")}
		if err := c.EnsureCluster(ctx, spec); err != nil {
			b.Fatal(err)
		}
		for j := range 50 {
			err := c.EnsureSubnet(ctx, northbound.SubnetSpec{Name: fmt.Sprintf("r%d-s%d", i, j), Router: router,
				CIDR:    netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(j), 0, 0}), 16),
				Gateway: netip.AddrFrom4([4]byte{10, byte(j), 0, 1})})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Startup measures Connect (initial monitor load) of a database holding ports pod ports,
// and reports the heap the connected client's cache holds.
func Startup(b *testing.B, ports int) {
	c, srv := setup(b)
	createPorts(b, c, 0, ports)
	c.Close()
	var heap uint64
	b.ResetTimer()
	for range b.N {
		before := heapInUse()
		nc, err := northbound.Connect(context.Background(), ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}, Log: quiet})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		heap = max(heap, heapInUse()-min(before, heapInUse()))
		runtime.KeepAlive(nc)
		nc.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "MiB-cache")
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// ResyncExisting ensures, one call per op, pod ports that already exist and are right, on a
// switch holding ports of them: the restart's re-sync of allocated pods, which writes nothing.
func ResyncExisting(b *testing.B, ports int) {
	c, _ := setup(b)
	createPorts(b, c, 0, ports)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := c.EnsurePodPort(ctx, Pod(i%ports)); err != nil {
			b.Fatal(err)
		}
	}
}
