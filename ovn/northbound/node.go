package northbound

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// Router policy priorities of Kube-OVN's distributed gateway: traffic to a node's own
// address goes to that node, and pod traffic for the outside leaves through the pod's host.
const (
	NodeRoutePriority   = 31000
	NodeGatewayPriority = 29000
)

// NodeSpec is one node's part of the topology: its port on the join switch ("node-<name>",
// bound to the host's ovn0) and the router policies of the distributed gateway.
type NodeSpec struct {
	Name       string
	Router     string           // cluster router ("ovn-cluster")
	JoinSwitch string           // join switch ("join")
	JoinIP     netip.Addr       // the node's IPv4 address on the join switch; invalid: an IPv6-only cluster
	JoinIP6    netip.Addr       // the node's IPv6 address on the join switch; invalid: no IPv6 join network
	MAC        net.HardwareAddr // the join port's MAC; nil: derived from the first join IP (GatewayMAC)
	NodeIP     netip.Addr       // the host's own IPv4 address, reached through its join port; invalid: none known yet
	PodIPs     []netip.Addr     // pods on this node whose outside traffic leaves through it (each family through its join IP)
}

// Validate reports what is wrong with the spec.
func (s NodeSpec) Validate() error {
	for what, name := range map[string]string{"node": s.Name, "router": s.Router, "join switch": s.JoinSwitch} {
		if err := validateName(what, name); err != nil {
			return err
		}
	}
	if !s.JoinIP.IsValid() && !s.JoinIP6.IsValid() {
		return fmt.Errorf("%w: node %s: no join IP", ovn.ErrInvalid, s.Name)
	}
	if s.JoinIP.IsValid() && !s.JoinIP.Is4() {
		return fmt.Errorf("%w: node %s: join IP %q is not an IPv4 address", ovn.ErrInvalid, s.Name, s.JoinIP)
	}
	if s.JoinIP6.IsValid() && !s.JoinIP6.Is6() || s.JoinIP6.Is4In6() {
		return fmt.Errorf("%w: node %s: join IPv6 %q is not an IPv6 address", ovn.ErrInvalid, s.Name, s.JoinIP6)
	}
	if s.NodeIP.IsValid() && (!s.NodeIP.Is4() || !s.JoinIP.IsValid()) {
		return fmt.Errorf("%w: node %s: node IP %q is not an IPv4 address, or there is no IPv4 join IP", ovn.ErrInvalid, s.Name, s.NodeIP)
	}
	if s.MAC != nil && !ovn.UnicastMAC(s.MAC) {
		return fmt.Errorf("%w: node %s: join MAC %q is not a unicast Ethernet address", ovn.ErrInvalid, s.Name, s.MAC)
	}
	for _, ip := range s.PodIPs {
		if !ip.IsValid() || ip.Is4In6() || ip.Is4() && !s.JoinIP.IsValid() || ip.Is6() && !s.JoinIP6.IsValid() {
			return fmt.Errorf("%w: node %s: pod IP %q has no join IP of its family", ovn.ErrInvalid, s.Name, ip)
		}
	}
	return nil
}

// NodePortName is the node's join switch port, as Kube-OVN names it.
func NodePortName(node string) string { return "node-" + node }

// NodeAddressSet is the address set of the node's pod IPv4 addresses.
func NodeAddressSet(node string) string {
	return strings.NewReplacer("-", "_").Replace(node) + ".pods_ip4"
}

// NodeAddressSet6 is the address set of the node's pod IPv6 addresses.
func NodeAddressSet6(node string) string {
	return strings.NewReplacer("-", "_").Replace(node) + ".pods_ip6"
}

func (s NodeSpec) owner() OwnerRef { return OwnerRef{Kind: ovn.KindNode, Name: s.Name} }

// JoinMAC is the MAC of the node's join port: MAC, else derived from its first join IP.
func (s NodeSpec) JoinMAC() net.HardwareAddr {
	if s.MAC != nil {
		return s.MAC
	}
	return GatewayMAC(s.joinIPs()[0])
}

// joinIPs are the node's join addresses, IPv4 first.
func (s NodeSpec) joinIPs() []netip.Addr {
	var out []netip.Addr
	for _, ip := range []netip.Addr{s.JoinIP, s.JoinIP6} {
		if ip.IsValid() {
			out = append(out, ip)
		}
	}
	return out
}

// EnsureNode creates or repairs, in one transaction, the node's join port, the address set
// of its pods, and the two router policies: to the node's IP via its join IP, and from its
// pods via its join IP. If everything is right, nothing is written.
func (c *Client) EnsureNode(ctx context.Context, spec NodeSpec) error {
	ops, err := c.nodeOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure node %s: %w", spec.Name, err)
	}
	return nil
}

func (c *Client) nodeOps(ctx context.Context, spec NodeSpec) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	ops, err := c.nodePortOps(ctx, spec)
	if err != nil {
		return nil, err
	}
	for _, set := range spec.addressSets() {
		if ops, err = c.addressSetOps(ctx, set, ops); err != nil {
			return nil, err
		}
	}
	for _, p := range spec.policies() {
		if ops, err = c.routerPolicyOps(ctx, p, ops); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// addressSet is the set of the node's pod IPv4 addresses, as /32 prefixes.
func (s NodeSpec) addressSet() AddressSetSpec {
	return s.familySet(NodeAddressSet(s.Name), netip.Addr.Is4)
}

// addressSets are the sets of the node's pod addresses, one per family it has a join IP of.
func (s NodeSpec) addressSets() []AddressSetSpec {
	var out []AddressSetSpec
	if s.JoinIP.IsValid() {
		out = append(out, s.addressSet())
	}
	if s.JoinIP6.IsValid() {
		out = append(out, s.familySet(NodeAddressSet6(s.Name), netip.Addr.Is6))
	}
	return out
}

func (s NodeSpec) familySet(name string, is func(netip.Addr) bool) AddressSetSpec {
	var pods []netip.Prefix
	for _, ip := range s.PodIPs {
		if is(ip) {
			pods = append(pods, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return AddressSetSpec{Name: name, Addresses: pods, Owner: s.owner()}
}

// policies are the distributed gateway's reroutes through the node's join IPs: traffic to
// the node itself (once its IPv4 address is known), and traffic from the node's pods
// (matched by their address set), one per family the node has a join IP of.
func (s NodeSpec) policies() []RouterPolicySpec {
	var out []RouterPolicySpec
	if s.JoinIP.IsValid() && s.NodeIP.IsValid() {
		out = append(out, RouterPolicySpec{Router: s.Router, Priority: NodeRoutePriority, Owner: s.owner(),
			Match: "ip4.dst == " + s.NodeIP.String(), Action: nbdb.LogicalRouterPolicyActionReroute, NextHops: []netip.Addr{s.JoinIP}})
	}
	if s.JoinIP.IsValid() {
		out = append(out, RouterPolicySpec{Router: s.Router, Priority: NodeGatewayPriority, Owner: s.owner(),
			Match: "ip4.src == $" + NodeAddressSet(s.Name), Action: nbdb.LogicalRouterPolicyActionReroute, NextHops: []netip.Addr{s.JoinIP}})
	}
	if s.JoinIP6.IsValid() {
		out = append(out, RouterPolicySpec{Router: s.Router, Priority: NodeGatewayPriority, Owner: s.owner(),
			Match: "ip6.src == $" + NodeAddressSet6(s.Name), Action: nbdb.LogicalRouterPolicyActionReroute, NextHops: []netip.Addr{s.JoinIP6}})
	}
	return out
}

// joinPortRow is the node's port on the join switch, addressed "<join MAC> <join IPs>".
func (s NodeSpec) joinPortRow() *nbdb.LogicalSwitchPort {
	addr := s.JoinMAC().String()
	for _, ip := range s.joinIPs() {
		addr += " " + ip.String()
	}
	return &nbdb.LogicalSwitchPort{Name: NodePortName(s.Name), Addresses: []string{addr}, ExternalIDs: s.owner().ids(),
		Options: map[string]string{RequestedChassisKey: s.Name}} // the host's ovn0 binds it, on no other chassis
}

// nodePortOps creates or repairs "node-<name>" on the join switch.
func (c *Client) nodePortOps(ctx context.Context, spec NodeSpec) ([]ovsdb.Operation, error) {
	join, err := c.switchByName(ctx, spec.JoinSwitch)
	switch {
	case err != nil:
		return nil, err
	case join == nil:
		return nil, fmt.Errorf("join switch %s: %w", spec.JoinSwitch, ovn.ErrNotFound)
	case !ovn.IsOwned(join.ExternalIDs):
		return nil, fmt.Errorf("join switch %s: %w", spec.JoinSwitch, ovn.ErrNotOwned)
	}
	want := spec.joinPortRow()
	name := want.Name
	cur, err := c.switchPortByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		want.UUID = "new_node_port"
		return c.insertChild([]ovsdb.Operation{ovn.WaitAbsent(nbdb.LogicalSwitchPortTable, "name", name)},
			want, want.UUID, parentRef{nbdb.LogicalSwitchTable, join.UUID, join.Name, "ports"})
	}
	if !ovn.IsOwned(cur.ExternalIDs) {
		return nil, fmt.Errorf("logical switch port %s: %w", name, ovn.ErrNotOwned)
	}
	var ops []ovsdb.Operation
	if !slices.Contains(join.Ports, cur.UUID) {
		ops = append(ops, ovn.WaitPresent(nbdb.LogicalSwitchTable, join.UUID, "name", join.Name),
			ovn.MutateRefs(nbdb.LogicalSwitchTable, join.UUID, "ports", ovsdb.MutateOperationInsert, cur.UUID))
	}
	if sameSet(cur.Addresses, want.Addresses) && ovn.HasAll(cur.ExternalIDs, want.ExternalIDs) && ovn.HasAll(cur.Options, want.Options) {
		return ops, nil
	}
	want.UUID = cur.UUID
	want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
	want.Options = merged(cur.Options, want.Options)
	upd, err := c.nb.Where(want).Update(want, &want.Addresses, &want.ExternalIDs, &want.Options)
	if err != nil {
		return nil, fmt.Errorf("build update of node port: %w", err)
	}
	return append(ops, upd...), nil
}
