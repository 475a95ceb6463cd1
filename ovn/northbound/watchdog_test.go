package northbound

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

// A frozen server keeps its TCP connections open, so only the Echo watchdog notices it.
func TestEchoWatchdogReconnectsFromHungServer(t *testing.T) {
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Connect(ctx, ovn.ConnectRequest{Endpoints: []string{srv.TCPEndpoint}, Log: log,
		EchoInterval: 100 * time.Millisecond, EchoTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	writeUntilAcked(t, ctx, func() error { return c.EnsureCluster(ctx, DefaultClusterSpec()) })

	srv.Pause()
	for c.nb.Connected() {
		select {
		case <-ctx.Done():
			srv.Resume()
			t.Fatal("client still connected to a frozen server: the watchdog never fired")
		case <-time.After(20 * time.Millisecond):
		}
	}
	srv.Resume()
	writeUntilAcked(t, ctx, func() error {
		return c.EnsureSubnet(ctx, SubnetSpec{Name: "ovn-default", Router: "ovn-cluster",
			CIDR: netip.MustParsePrefix("10.42.0.0/16"), Gateway: netip.MustParseAddr("10.42.0.1")})
	})
	if lr, err := c.routerByName(ctx, "ovn-cluster"); err != nil || lr == nil || len(lr.Ports) != 2 {
		t.Fatalf("router after reconnect = %+v, %v; want 2 ports", lr, err)
	}
}
