package hostnet

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// svcTable is the nftables table of the NodePorts, external IPs and LoadBalancer IPs
// edgeovn serves when kube-proxy does not.
// Nothing outside it is touched.
const svcTable = "edgeovn-svc"

// masqMark marks NodePort connections sent to a ClusterIP: they leave by ovn0 with the
// host's join address, so the backend's reply comes back through the host.
const masqMark = 0x10000

type svcChain struct {
	name  string
	hook  *nftables.ChainHook
	prio  *nftables.ChainPriority
	rules []svcRule
}

type svcRule struct {
	desc  string
	exprs []expr.Any
}

// svcChainNames are the table's chains in the order they are written and read back.
var svcChainNames = []string{"nodeports", "serviceips", "serviceips-out", "prerouting", "output", "postrouting"}

// svcChains is the whole table spec asks for, chain by chain. Arriving traffic is matched
// against the external and LoadBalancer IPs first (any destination), then, for the host's own
// addresses, against the node ports; the host's own traffic the same way, through
// serviceips-out.
func svcChains(spec ServiceSpec) []svcChain {
	jumps := func(ips string) []svcRule {
		return []svcRule{
			{desc: "jump " + ips, exprs: []expr.Any{&expr.Verdict{Kind: expr.VerdictJump, Chain: ips}}},
			{desc: "local jump nodeports", exprs: append(localDestination(), &expr.Verdict{Kind: expr.VerdictJump, Chain: "nodeports"})},
		}
	}
	var nodeports, ips, ipsOut []svcRule
	for _, np := range spec.NodePorts {
		nodeports = append(nodeports, nodePortRules(np)...)
	}
	for _, sip := range spec.ServiceIPs {
		ips = append(ips, serviceIPRules(sip)...)
		ipsOut = append(ipsOut, serviceIPOutRules(sip)...)
	}
	name := make([]byte, unix.IFNAMSIZ)
	copy(name, spec.Interface)
	masq := []svcRule{{desc: "mark oif " + spec.Interface + " masquerade", exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: binaryutil.NativeEndian.PutUint32(masqMark), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(masqMark)},
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: name},
		&expr.Masq{},
	}}}
	return []svcChain{
		{name: "nodeports", rules: nodeports},
		{name: "serviceips", rules: ips},
		{name: "serviceips-out", rules: ipsOut},
		{name: "prerouting", hook: nftables.ChainHookPrerouting, prio: nftables.ChainPriorityNATDest, rules: jumps("serviceips")},
		{name: "output", hook: nftables.ChainHookOutput, prio: nftables.ChainPriorityNATDest, rules: jumps("serviceips-out")},
		{name: "postrouting", hook: nftables.ChainHookPostrouting, prio: nftables.ChainPriorityNATSource, rules: masq},
	}
}

// localDestination matches packets to one of the host's own addresses.
func localDestination() []expr.Any {
	return []expr.Any{
		&expr.Fib{Register: 1, FlagDADDR: true, ResultADDRTYPE: true},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(unix.RTN_LOCAL)},
	}
}

var l4proto = map[string]byte{"tcp": unix.IPPROTO_TCP, "udp": unix.IPPROTO_UDP, "sctp": unix.IPPROTO_SCTP}

// l4Match matches the protocol and destination port.
func l4Match(proto string, port uint16) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{l4proto[proto]}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
	}
}

// serviceIPMatch matches the destination address, protocol and port.
func serviceIPMatch(s ServiceIP) []expr.Any {
	return append([]expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: s.IP.Addr().AsSlice()},
	}, l4Match(s.Protocol, s.IP.Port())...)
}

// nodePortRules DNATs the node port: to the ClusterIP (marked for masquerade), or to this
// host's endpoints. Local with none serves nothing (the host answers for its own address).
func nodePortRules(np NodePort) []svcRule {
	match := l4Match(np.Protocol, np.Port)
	if !np.LocalOnly {
		return []svcRule{toClusterIP(match, np.describe(), np.ClusterIP)}
	}
	return toLocal(match, np.describe(), np.Local)
}

// serviceIPRules DNATs arriving traffic to an external or LoadBalancer IP as nodePortRules
// does, and drops it under the Local policy when this host has no endpoint (kube-proxy's
// behaviour: the load balancer's health check steers clients away from such hosts).
func serviceIPRules(s ServiceIP) []svcRule {
	return restrictSources(s, s.describe(), func(match []expr.Any, desc string) []svcRule { return serviceIPTarget(s, match, desc) })
}

// serviceIPOutRules send the host's own connections to the ClusterIP, within the same
// source ranges.
func serviceIPOutRules(s ServiceIP) []svcRule {
	return restrictSources(s, "out "+s.describe(), func(match []expr.Any, desc string) []svcRule {
		return []svcRule{toClusterIP(match, desc, s.ClusterIP)}
	})
}

// restrictSources is target's rules for s's match, once per allowed source network when s is
// Restricted, followed by a rule dropping every other source (kube-proxy's firewall chain:
// a LoadBalancer IP with loadBalancerSourceRanges answers no one else).
func restrictSources(s ServiceIP, desc string, target func(match []expr.Any, desc string) []svcRule) []svcRule {
	match := serviceIPMatch(s)
	if !s.Restricted {
		return target(match, desc)
	}
	var out []svcRule
	for _, p := range s.AllowFrom {
		out = append(out, target(append(slices.Clone(match), sourceMatch(p)...), desc+" src "+p.String())...)
	}
	return append(out, svcRule{desc: desc + " other sources drop", exprs: append(match, &expr.Verdict{Kind: expr.VerdictDrop})})
}

// sourceMatch matches an IPv4 source address inside p.
func sourceMatch(p netip.Prefix) []expr.Any {
	mask := net.CIDRMask(p.Bits(), 32)
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: p.Addr().AsSlice()},
	}
}

// serviceIPTarget is where arriving traffic matching match goes.
func serviceIPTarget(s ServiceIP, match []expr.Any, desc string) []svcRule {
	switch {
	case !s.LocalOnly:
		return []svcRule{toClusterIP(match, desc, s.ClusterIP)}
	case len(s.Local) == 0:
		return []svcRule{{desc: desc + " drop", exprs: append(slices.Clone(match), &expr.Verdict{Kind: expr.VerdictDrop})}}
	}
	return toLocal(match, desc, s.Local)
}

// toClusterIP DNATs to the ClusterIP, marked for masquerade on ovn0.
func toClusterIP(match []expr.Any, desc string, clusterIP netip.AddrPort) svcRule {
	mark := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(^uint32(masqMark)), Xor: binaryutil.NativeEndian.PutUint32(masqMark)},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
	}
	return svcRule{desc: desc, exprs: append(append(slices.Clone(match), mark...), dnat(clusterIP.Addr().AsSlice(), clusterIP.Port())...)}
}

// toLocal DNATs to the endpoints, spread evenly (rule i of n matches one time in n-i, as
// kube-proxy's iptables mode does).
func toLocal(match []expr.Any, desc string, eps []netip.AddrPort) []svcRule {
	var out []svcRule
	for i, ep := range eps {
		exprs := slices.Clone(match)
		if left := len(eps) - i; left > 1 {
			exprs = append(exprs,
				&expr.Numgen{Register: 1, Modulus: uint32(left), Type: unix.NFT_NG_RANDOM},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)})
		}
		out = append(out, svcRule{desc: fmt.Sprintf("%s #%d", desc, i), exprs: append(exprs, dnat(ep.Addr().AsSlice(), ep.Port())...)})
	}
	return out
}

func dnat(ip []byte, port uint16) []expr.Any {
	return []expr.Any{
		&expr.Immediate{Register: 1, Data: ip},
		&expr.Immediate{Register: 2, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1, RegProtoMin: 2},
	}
}

// EnsureServices makes the table hold exactly what spec asks for; nil spec (kube-proxy
// serves NodePorts) removes it. The whole table is replaced in one batch when anything
// differs, and nothing is sent when it matches.
func EnsureServices(_ context.Context, spec *ServiceSpec, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if spec != nil {
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("serve node ports: %w", err)
		}
	}
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("open nftables: %w", err)
	}
	t := &nftables.Table{Name: svcTable, Family: nftables.TableFamilyIPv4}
	have, exists, err := svcDescriptions(conn, t)
	if err != nil {
		return err
	}
	if spec == nil {
		if !exists {
			return nil
		}
		conn.DelTable(t)
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("delete nftables table ip %s: %w", svcTable, err)
		}
		log.Info("removed node port rules: kube-proxy serves them", "table", svcTable)
		return nil
	}
	chains := svcChains(*spec)
	if exists && slices.Equal(have, descriptions(chains)) {
		return nil
	}
	if exists {
		conn.DelTable(t)
	}
	writeSvcTable(conn, t, chains)
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("write nftables table ip %s: %w", svcTable, err)
	}
	log.Info("wrote node port rules", "table", svcTable, "node_ports", len(spec.NodePorts), "service_ips", len(spec.ServiceIPs))
	return nil
}

func writeSvcTable(conn *nftables.Conn, t *nftables.Table, chains []svcChain) {
	conn.AddTable(t)
	accept := nftables.ChainPolicyAccept
	for _, sc := range chains {
		c := &nftables.Chain{Name: sc.name, Table: t}
		if sc.hook != nil {
			c.Type, c.Hooknum, c.Priority, c.Policy = nftables.ChainTypeNAT, sc.hook, sc.prio, &accept
		}
		conn.AddChain(c)
	}
	for _, sc := range chains {
		for _, r := range sc.rules {
			conn.AddRule(&nftables.Rule{Table: t, Chain: &nftables.Chain{Name: sc.name, Table: t}, Exprs: r.exprs, UserData: []byte(r.desc)})
		}
	}
}

// descriptions is "chain: rule" for every rule, chains in order.
func descriptions(chains []svcChain) []string {
	var out []string
	for _, c := range chains {
		out = append(out, "chain "+c.name)
		for _, r := range c.rules {
			out = append(out, c.name+": "+r.desc)
		}
	}
	return out
}

// svcDescriptions reads the table back in the same form (chains in the order we write them).
func svcDescriptions(conn *nftables.Conn, t *nftables.Table) ([]string, bool, error) {
	chains, err := conn.ListChainsOfTableFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return nil, false, fmt.Errorf("list nftables chains: %w", err)
	}
	byName := map[string]*nftables.Chain{}
	for _, c := range chains {
		if c.Table.Name == svcTable {
			byName[c.Name] = c
		}
	}
	tables, err := conn.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return nil, false, fmt.Errorf("list nftables tables: %w", err)
	}
	if !slices.ContainsFunc(tables, func(x *nftables.Table) bool { return x.Name == svcTable }) {
		return nil, false, nil
	}
	var out []string
	for _, name := range svcChainNames {
		c := byName[name]
		if c == nil {
			return nil, true, nil
		}
		out = append(out, "chain "+name)
		rules, err := conn.GetRules(t, c)
		if err != nil {
			return nil, true, fmt.Errorf("list rules of nftables chain ip %s %s: %w", svcTable, name, err)
		}
		for _, r := range rules {
			out = append(out, name+": "+string(r.UserData))
		}
	}
	if len(byName) != len(svcChainNames) {
		return nil, true, nil
	}
	return out, true, nil
}
