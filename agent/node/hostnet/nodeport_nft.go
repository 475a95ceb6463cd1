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

// svcChains is the whole table of family f spec asks for, chain by chain (nil: the IPv6
// table with nothing of its family to serve). Arriving traffic is matched against the external
// and LoadBalancer IPs first (any destination), then, for the host's own addresses, against
// the node ports; the host's own traffic the same way, through serviceips-out.
func svcChains(f hostPortFamily, spec ServiceSpec) []svcChain {
	jumps := func(ips string) []svcRule {
		return []svcRule{
			{desc: "jump " + ips, exprs: []expr.Any{&expr.Verdict{Kind: expr.VerdictJump, Chain: ips}}},
			{desc: "local jump nodeports", exprs: append(localDestination(), &expr.Verdict{Kind: expr.VerdictJump, Chain: "nodeports"})},
		}
	}
	var nodeports, ips, ipsOut []svcRule
	served := false
	for _, np := range spec.NodePorts {
		if np.IPv6 == (f.family == nftables.TableFamilyIPv6) {
			nodeports, served = append(nodeports, nodePortRules(f, np)...), true
		}
	}
	for _, sip := range spec.ServiceIPs {
		if !f.is(sip.IP.Addr()) {
			continue
		}
		ips, served = append(ips, serviceIPRules(f, sip)...), true
		ipsOut = append(ipsOut, serviceIPOutRules(f, sip)...)
	}
	if !served && f.family == nftables.TableFamilyIPv6 {
		return nil
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
func serviceIPMatch(f hostPortFamily, s ServiceIP) []expr.Any {
	return append([]expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.dst, Len: f.size},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: s.IP.Addr().AsSlice()},
	}, l4Match(s.Protocol, s.IP.Port())...)
}

// nodePortRules DNATs the node port: to the ClusterIP (marked for masquerade), or to this
// host's endpoints when it has them listed. LocalOnly with none serves nothing (the host
// answers for its own address).
func nodePortRules(f hostPortFamily, np NodePort) []svcRule {
	match := l4Match(np.Protocol, np.Port)
	if !np.LocalOnly && len(np.Local) == 0 {
		return []svcRule{toClusterIP(f, match, np.describe(), np.ClusterIP)}
	}
	return toLocal(f, match, np.describe(), np.Local)
}

// serviceIPRules DNATs arriving traffic to an external or LoadBalancer IP as nodePortRules
// does, and drops it under the Local policy when this host has no endpoint (kube-proxy's
// behaviour: the load balancer's health check steers clients away from such hosts).
func serviceIPRules(f hostPortFamily, s ServiceIP) []svcRule {
	return restrictSources(f, s, s.describe(), func(match []expr.Any, desc string) []svcRule { return serviceIPTarget(f, s, match, desc) })
}

// serviceIPOutRules send the host's own connections to the ClusterIP, within the same
// source ranges, or (Host) to the host's own endpoints.
func serviceIPOutRules(f hostPortFamily, s ServiceIP) []svcRule {
	return restrictSources(f, s, "out "+s.describe(), func(match []expr.Any, desc string) []svcRule {
		if s.Host && len(s.Local) > 0 {
			return toLocal(f, match, desc, s.Local)
		}
		return []svcRule{toClusterIP(f, match, desc, s.ClusterIP)}
	})
}

// restrictSources is target's rules for s's match, once per allowed source network (of the
// table's family) when s is Restricted, followed by a rule dropping every other source
// (kube-proxy's firewall chain: a LoadBalancer IP with loadBalancerSourceRanges answers no
// one else).
func restrictSources(f hostPortFamily, s ServiceIP, desc string, target func(match []expr.Any, desc string) []svcRule) []svcRule {
	match := serviceIPMatch(f, s)
	if !s.Restricted {
		return target(match, desc)
	}
	var out []svcRule
	for _, p := range s.AllowFrom {
		if f.is(p.Addr()) {
			out = append(out, target(append(slices.Clone(match), sourceMatch(f, p)...), desc+" src "+p.String())...)
		}
	}
	return append(out, svcRule{desc: desc + " other sources drop", exprs: append(match, &expr.Verdict{Kind: expr.VerdictDrop})})
}

// sourceMatch matches a source address inside p (of the table's family).
func sourceMatch(f hostPortFamily, p netip.Prefix) []expr.Any {
	mask := net.CIDRMask(p.Bits(), int(f.size)*8)
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.src, Len: f.size},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: f.size, Mask: mask, Xor: make([]byte, f.size)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: p.Addr().AsSlice()},
	}
}

// serviceIPTarget is where arriving traffic matching match goes.
func serviceIPTarget(f hostPortFamily, s ServiceIP, match []expr.Any, desc string) []svcRule {
	switch {
	case !s.LocalOnly:
		return []svcRule{toClusterIP(f, match, desc, s.ClusterIP)}
	case len(s.Local) == 0:
		return []svcRule{{desc: desc + " drop", exprs: append(slices.Clone(match), &expr.Verdict{Kind: expr.VerdictDrop})}}
	}
	return toLocal(f, match, desc, s.Local)
}

// toClusterIP DNATs to the ClusterIP, marked for masquerade on ovn0.
func toClusterIP(f hostPortFamily, match []expr.Any, desc string, clusterIP netip.AddrPort) svcRule {
	mark := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(^uint32(masqMark)), Xor: binaryutil.NativeEndian.PutUint32(masqMark)},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
	}
	return svcRule{desc: desc, exprs: append(append(slices.Clone(match), mark...), dnat(f, clusterIP.Addr().AsSlice(), clusterIP.Port())...)}
}

// toLocal DNATs to the endpoints, spread evenly (rule i of n matches one time in n-i, as
// kube-proxy's iptables mode does).
func toLocal(f hostPortFamily, match []expr.Any, desc string, eps []netip.AddrPort) []svcRule {
	var out []svcRule
	for i, ep := range eps {
		exprs := slices.Clone(match)
		if left := len(eps) - i; left > 1 {
			exprs = append(exprs,
				&expr.Numgen{Register: 1, Modulus: uint32(left), Type: unix.NFT_NG_RANDOM},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)})
		}
		out = append(out, svcRule{desc: fmt.Sprintf("%s #%d", desc, i), exprs: append(exprs, dnat(f, ep.Addr().AsSlice(), ep.Port())...)})
	}
	return out
}

func dnat(f hostPortFamily, ip []byte, port uint16) []expr.Any {
	return []expr.Any{
		&expr.Immediate{Register: 1, Data: ip},
		&expr.Immediate{Register: 2, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: f.proto, RegAddrMin: 1, RegProtoMin: 2},
	}
}

// EnsureServices makes the tables hold exactly what spec asks for; nil spec (kube-proxy
// serves NodePorts) removes them. "ip edgeovn-svc" is always written; "ip6 edgeovn-svc" only
// while an IPv6 node port or service IP is served. Each table is replaced in one batch when
// anything in it differs, and nothing is sent when it matches.
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
	for _, f := range hostPortFamilies {
		var chains []svcChain
		if spec != nil {
			chains = svcChains(f, *spec)
		}
		wrote, err := ensureSvcTable(conn, f, chains)
		switch {
		case err != nil:
			return err
		case wrote && chains == nil:
			log.Info("removed node port rules", "table", f.name+" "+svcTable)
		case wrote:
			log.Info("wrote node port rules", "table", f.name+" "+svcTable, "node_ports", len(spec.NodePorts), "service_ips", len(spec.ServiceIPs))
		}
	}
	return nil
}

// ensureSvcTable makes one family's table hold exactly chains (nil: no table), and reports
// whether it wrote.
func ensureSvcTable(conn *nftables.Conn, f hostPortFamily, chains []svcChain) (bool, error) {
	t := &nftables.Table{Name: svcTable, Family: f.family}
	have, exists, err := tableDescriptions(conn, t, svcChainNames)
	if err != nil {
		return false, err
	}
	if chains == nil {
		if !exists {
			return false, nil
		}
		conn.DelTable(t)
		if err := conn.Flush(); err != nil {
			return false, fmt.Errorf("delete nftables table %s %s: %w", f.name, svcTable, err)
		}
		return true, nil
	}
	if exists && slices.Equal(have, descriptions(chains)) {
		return false, nil
	}
	if exists {
		conn.DelTable(t)
	}
	writeSvcTable(conn, t, chains)
	if err := conn.Flush(); err != nil {
		return false, fmt.Errorf("write nftables table %s %s: %w", f.name, svcTable, err)
	}
	return true, nil
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
