package northbound

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

// numberedPod is pod port i of ovn-default, each with its own name, MAC and address.
func numberedPod(i int) PodPortSpec {
	return PodPortSpec{
		Switch: "ovn-default",
		Name:   fmt.Sprintf("p%d.default", i),
		MAC:    net.HardwareAddr{0x0a, 0x58, 0x0a, 0x2a, byte(i >> 8), byte(i)},
		IPs:    []netip.Addr{netip.AddrFrom4([4]byte{10, 42, byte(i >> 8), byte(i) + 10})},
		Owner:  fmt.Sprintf("default/p%d", i),
	}
}

// writeUntilAcked retries ensure until it succeeds, as a controller's work queue would while
// the database is away; it fails the test when ctx ends first.
func writeUntilAcked(t *testing.T, ctx context.Context, ensure func() error) {
	t.Helper()
	for {
		err := ensure()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("write never acknowledged: %v", err)
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// writePods writes pods [from, to) one transaction each and reports each acknowledgement.
func writePods(t *testing.T, ctx context.Context, c *Client, from, to int, acked chan<- int) {
	defer close(acked)
	for i := from; i < to && ctx.Err() == nil; i++ {
		writeUntilAcked(t, ctx, func() error { return c.EnsurePodPort(ctx, numberedPod(i)) })
		acked <- i
	}
}

// serverPortNames lists the switch port names the server has, read with ovn-nbctl.
func serverPortNames(out string) []string {
	names := strings.Fields(out)
	slices.Sort(names)
	return names
}

// cachePortNames lists the switch port names in the client's cache.
func cachePortNames(t *testing.T, ctx context.Context, c *Client) []string {
	t.Helper()
	var lsps []*nbdb.LogicalSwitchPort
	if err := c.nb.List(ctx, &lsps); err != nil {
		t.Fatalf("list cache: %v", err)
	}
	names := make([]string, len(lsps))
	for i, p := range lsps {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// checkConsistent checks that every acknowledged pod is on the server and that the cache
// holds exactly the server's ports, waiting a little for monitor updates to arrive.
func checkConsistent(t *testing.T, ctx context.Context, c *Client, acked []int, server func() string) {
	t.Helper()
	have := serverPortNames(server())
	for _, i := range acked {
		if name := numberedPod(i).Name; !slices.Contains(have, name) {
			t.Errorf("acknowledged pod port %s lost", name)
		}
	}
	var cached []string
	for range 100 {
		if cached = cachePortNames(t, ctx, c); slices.Equal(cached, have) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("cache differs from server:\ncache  %v\nserver %v", cached, have)
}

func TestReconnectAfterServerRestart(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	acks := make(chan int)
	go writePods(t, ctx, f.c, 0, 60, acks)
	var acked []int
	for i := range acks {
		acked = append(acked, i)
		if len(acked) == 20 {
			f.srv.Restart(t)
		}
	}
	if len(acked) != 60 {
		t.Fatalf("%d of 60 writes acknowledged", len(acked))
	}
	listPorts := func() string {
		return f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Logical_Switch_Port")
	}
	checkConsistent(t, ctx, f.c, acked, listPorts)
	// The client is usable again: an ensure of existing state writes nothing, a new one writes.
	f.mustWrite(t, 0, "ensure existing pod port", func() error { return f.c.EnsurePodPort(ctx, numberedPod(3)) })
	f.mustWrite(t, 1, "ensure new pod port", func() error { return f.c.EnsurePodPort(ctx, numberedPod(100)) })
}

func TestRaftLeaderKilledDuringWrites(t *testing.T) {
	cl := ovsdbtest.StartCluster(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"), "OVN_Northbound", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Connect(ctx, ovn.ConnectRequest{Endpoints: cl.Endpoints(), Log: log})
	if err != nil {
		t.Fatalf("connect to cluster: %v", err)
	}
	defer c.Close()
	writeUntilAcked(t, ctx, func() error { return c.EnsureCluster(ctx, DefaultClusterSpec()) })
	writeUntilAcked(t, ctx, func() error {
		return c.EnsureSubnet(ctx, SubnetSpec{Name: "ovn-default", Router: "ovn-cluster",
			CIDR: netip.MustParsePrefix("10.42.0.0/16"), Gateway: netip.MustParseAddr("10.42.0.1")})
	})

	leader := cl.Leader(t)
	acks := make(chan int)
	go writePods(t, ctx, c, 0, 60, acks)
	var acked []int
	for i := range acks {
		acked = append(acked, i)
		if len(acked) == 20 {
			leader.Kill()
		}
	}
	if len(acked) != 60 {
		t.Fatalf("%d of 60 writes acknowledged", len(acked))
	}
	if newLeader := cl.Leader(t); newLeader == leader {
		t.Fatal("killed member still reported as leader")
	}
	listPorts := func() string {
		return cl.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Logical_Switch_Port")
	}
	checkConsistent(t, ctx, c, acked, listPorts)
}
