package harness

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// The underlay of a Cluster: a Linux bridge in a namespace of its own, with one veth leg per
// member (the central and each host). Its addresses come from TEST-NET-3 (RFC 5737, never
// routed) and exist only inside the cluster's namespaces.
var (
	underlayNet    = netip.MustParsePrefix("203.0.113.0/24")
	underlayBridge = "br0"
	// centralIP is the central's address: the API server's and the OVN databases', and every
	// host's default gateway.
	centralIP = netip.MustParseAddr("203.0.113.1")
)

// hostIP is host i's (0-based) underlay address: .11, .12, ...
func hostIP(i int) netip.Addr {
	a := underlayNet.Addr().As4()
	a[3] = byte(11 + i)
	return netip.AddrFrom4(a)
}

// underlay is the bridge namespace.
type underlay struct {
	netns string
}

// newUnderlay creates the bridge namespace and its bridge.
func newUnderlay(ctx context.Context) (*underlay, error) {
	name, err := newNetnsName()
	if err != nil {
		return nil, err
	}
	if err := createNetns(ctx, name); err != nil {
		return nil, err
	}
	u := &underlay{netns: name}
	err = ipSteps(ctx, name, [][]string{
		{"link", "add", underlayBridge, "type", "bridge"},
		{"link", "set", underlayBridge, "up"},
	})
	if err != nil {
		return u, err
	}
	return u, nil
}

// attach connects member (a namespace) to the bridge: eth0 in member, leg on the bridge.
// The member's eth0 is left down and without an address: that is the member's to decide.
func (u *underlay) attach(ctx context.Context, member, leg string) error {
	cmd := exec.CommandContext(ctx, "ip", "link", "add", uplinkName, "netns", member, "type", "veth",
		"peer", "name", leg, "netns", u.netns)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("connect netns %s to the underlay: %w: %s", member, err, strings.TrimSpace(string(out)))
	}
	return ipSteps(ctx, u.netns, [][]string{
		{"link", "set", leg, "master", underlayBridge},
		{"link", "set", leg, "up"},
	})
}

// close deletes the namespace, and with it the bridge and the legs (each veth pair goes with
// either end's namespace).
func (u *underlay) close() error {
	if u == nil {
		return nil
	}
	return deleteNetns(u.netns)
}
