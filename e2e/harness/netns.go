package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vishvananda/netns"
)

// netnsDir is where `ip netns` keeps its named namespaces.
const netnsDir = "/run/netns"

// newNetnsName returns a fresh namespace name, eovn-<8 hex>.
func newNetnsName() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random netns name: %w", err)
	}
	return "eovn-" + hex.EncodeToString(b), nil
}

// The simulated host's uplink: eth0, a tap device no program reads (this kernel has no dummy
// links), with an address from TEST-NET-1 (RFC 5737, never routed) and a default route
// through it. A real host has both: the API server derives the
// address it advertises (the "kubernetes" Service's endpoint, which may not be loopback) from
// them, and node software looks for the default route's interface. Nothing sent there leaves
// the namespace: a tap without a reader drops every packet.
var (
	nodeIP     = netip.MustParsePrefix("192.0.2.10/24")
	uplinkGW   = netip.MustParseAddr("192.0.2.1")
	uplinkName = "eth0"
	// nodeIP6 is eth0's IPv6 address (documentation prefix, RFC 3849) when the service range's
	// first family is IPv6: the API server advertises an address of that family.
	nodeIP6 = netip.MustParsePrefix("2001:db8:2::10/64")
)

// createNetns creates the named namespace with its loopback up. `ip netns add` is used
// rather than netns.NewNamed because it leaves no thread of this process inside the namespace.
func createNetns(ctx context.Context, name string) error {
	if out, err := exec.CommandContext(ctx, "ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("create netns %s: %w: %s", name, err, out)
	}
	return ipSteps(ctx, name, [][]string{{"link", "set", "lo", "up"}})
}

// addTapUplink gives a lone host its uplink: eth0, a tap with nodeIP and the default route.
func addTapUplink(ctx context.Context, name string) error {
	return ipSteps(ctx, name, [][]string{
		{"tuntap", "add", "dev", uplinkName, "mode", "tap"},
		{"addr", "add", nodeIP.String(), "dev", uplinkName},
		{"link", "set", uplinkName, "up"},
		{"route", "add", "default", "via", uplinkGW.String(), "dev", uplinkName},
	})
}

// LANPeerIP is the address of a neighbour on the host's LAN (Options.LANPeer) that is not
// the gateway: a Subnet on the LAN would make OVN answer for its gateway address, not for
// this one.
var LANPeerIP = netip.MustParseAddr("192.0.2.20")

// addVethUplink gives a lone host an uplink with a neighbour: eth0 with nodeIP and the
// default route is a veth whose peer, in the namespace lan, holds the gateway's address and
// LANPeerIP (forwarding off there: nothing goes further). The LAN peer answers ARP and ping.
func addVethUplink(ctx context.Context, name, lan string) error {
	if err := createNetns(ctx, lan); err != nil {
		return err
	}
	if err := ipSteps(ctx, name, [][]string{
		{"link", "add", uplinkName, "type", "veth", "peer", "name", uplinkName, "netns", lan},
		{"addr", "add", nodeIP.String(), "dev", uplinkName},
		{"link", "set", uplinkName, "up"},
		{"route", "add", "default", "via", uplinkGW.String(), "dev", uplinkName},
	}); err != nil {
		return err
	}
	gw := netip.PrefixFrom(uplinkGW, nodeIP.Bits())
	return ipSteps(ctx, lan, [][]string{
		{"addr", "add", gw.String(), "dev", uplinkName},
		{"addr", "add", netip.PrefixFrom(LANPeerIP, nodeIP.Bits()).String(), "dev", uplinkName},
		{"link", "set", uplinkName, "up"},
	})
}

// ipSteps runs `ip -n name <step>` for each step, stopping at the first failure.
func ipSteps(ctx context.Context, name string, steps [][]string) error {
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, "ip", append([]string{"-n", name}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("set up netns %s: ip %s: %w: %s", name, strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// waitLink waits until the namespace has a network device of that name: ovs-vsctl returns
// before ovs-vswitchd made a bridge's tap when the bridge was in its database already (a
// Reboot).
func waitLink(ctx context.Context, netns, name string) error {
	ctx, cancel := context.WithTimeout(ctx, daemonReadyTimeout)
	defer cancel()
	for {
		err := exec.CommandContext(ctx, "ip", "-n", netns, "link", "show", name).Run()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("netns %s: no device %s: %w", netns, name, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// deleteNetns removes the named namespace; a namespace already gone is not an error.
func deleteNetns(name string) error {
	if _, err := os.Stat(filepath.Join(netnsDir, name)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "delete", name).CombinedOutput(); err != nil {
		return fmt.Errorf("delete netns %s: %w: %s", name, err, out)
	}
	return nil
}

// dialInNetns opens a connection from inside the namespace at path. The socket is created on
// a locked OS thread switched into the namespace and keeps that namespace afterwards. address
// must be a literal IP and port: name resolution could run on another thread.
func dialInNetns(ctx context.Context, path, network, address string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		conn, clean, err := dialLocked(ctx, path, network, address)
		if clean {
			runtime.UnlockOSThread()
		} // else: the thread stays locked and dies with this goroutine, namespace and all
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}

// dialLocked runs on a locked thread; clean reports whether the thread is back in its
// original namespace.
func dialLocked(ctx context.Context, path, network, address string) (net.Conn, bool, error) {
	orig, err := netns.Get()
	if err != nil {
		return nil, true, fmt.Errorf("dial %s: get current netns: %w", address, err)
	}
	defer orig.Close()
	target, err := netns.GetFromPath(path)
	if err != nil {
		return nil, true, fmt.Errorf("dial %s: open netns %s: %w", address, path, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return nil, true, fmt.Errorf("dial %s: enter netns %s: %w", address, path, err)
	}
	var d net.Dialer
	conn, dialErr := d.DialContext(ctx, network, address)
	if err := netns.Set(orig); err != nil {
		if conn != nil {
			conn.Close()
		}
		return nil, false, fmt.Errorf("dial %s: return from netns %s: %w", address, path, err)
	}
	if dialErr != nil {
		return nil, true, fmt.Errorf("dial %s in netns %s: %w", address, path, dialErr)
	}
	return conn, true, nil
}
