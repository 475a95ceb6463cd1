package hostnet

import (
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// hostPortTable is the nftables table, one per family ("ip edgeovn-hostport", "ip6
// edgeovn-hostport"), of the pods' host ports. Nothing outside it is touched.
const hostPortTable = "edgeovn-hostport"

// ctStatusDNAT is IPS_DST_NAT: the connection's destination was rewritten (here, by a host
// port's DNAT).
const ctStatusDNAT = 1 << 5

// hostPortFamily is what differs between the IPv4 and the IPv6 table.
type hostPortFamily struct {
	family   nftables.TableFamily
	name     string // "ip" or "ip6"
	proto    uint32 // NFPROTO_* for the NAT expression
	is       func(netip.Addr) bool
	src, dst uint32 // header offsets of the addresses
	size     uint32 // address length
}

var hostPortFamilies = []hostPortFamily{
	{nftables.TableFamilyIPv4, "ip", unix.NFPROTO_IPV4, netip.Addr.Is4, 12, 16, 4},
	{nftables.TableFamilyIPv6, "ip6", unix.NFPROTO_IPV6, netip.Addr.Is6, 8, 24, 16},
}

// hostPortChains is one family's table for the pods, chain by chain (the same shape as the
// node port table: a regular chain of DNATs that the prerouting and output hooks jump to
// for the host's own addresses, and the masquerades after them).
//
// As the portmap plugin does: a connection to a host port on any local address (on HostIP
// alone when the mapping names one) is DNATed to the pod, arriving from outside
// (prerouting) or made on the host itself (output), 127.0.0.1 included (route_localnet on
// the interface towards the pod lets it leave the host; it is masqueraded, as the pod
// could not answer 127.0.0.1). Unlike portmap, a connection from any pod of the pod's
// subnet is masqueraded too, not only the pod's own (hairpin): OVN switches the backend's
// reply straight to a pod client, past the host's conntrack, where portmap's bridge relies
// on br_netfilter.
func hostPortChains(f hostPortFamily, pods []PodPorts) []svcChain {
	jump := []svcRule{{desc: "local jump hostports", exprs: append(localDestination(),
		&expr.Verdict{Kind: expr.VerdictJump, Chain: "hostports"})}}
	var dnats, masq []svcRule
	for _, p := range pods {
		for _, ip := range p.IPs {
			if !f.is(ip.Addr()) {
				continue
			}
			for _, m := range p.Mappings {
				if m.HostIP.IsValid() && !f.is(m.HostIP) {
					continue // the other family's (portmap ignores it too)
				}
				dnats = append(dnats, f.dnatRule(p.ContainerID, m, ip.Addr()))
			}
			masq = append(masq, f.masqRules(p.ContainerID, ip)...)
		}
	}
	if len(dnats) == 0 {
		return nil
	}
	return []svcChain{
		{name: "hostports", rules: dnats},
		{name: "prerouting", hook: nftables.ChainHookPrerouting, prio: nftables.ChainPriorityNATDest, rules: jump},
		{name: "output", hook: nftables.ChainHookOutput, prio: nftables.ChainPriorityNATDest, rules: jump},
		{name: "postrouting", hook: nftables.ChainHookPostrouting, prio: nftables.ChainPriorityNATSource, rules: masq},
	}
}

// dnatRule is `[ip daddr HOSTIP] meta l4proto P th dport HOSTPORT dnat ip to POD:PORT`.
func (f hostPortFamily) dnatRule(cid string, m PortMapping, pod netip.Addr) svcRule {
	var exprs []expr.Any
	host := "*"
	if m.HostIP.IsValid() && !m.HostIP.IsUnspecified() {
		host = m.HostIP.String()
		exprs = append(exprs,
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.dst, Len: f.size},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: m.HostIP.AsSlice()})
	}
	exprs = append(exprs,
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{l4proto[m.Protocol]}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(m.HostPort)},
		&expr.Immediate{Register: 1, Data: pod.AsSlice()},
		&expr.Immediate{Register: 2, Data: binaryutil.BigEndian.PutUint16(m.ContainerPort)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: f.proto, RegAddrMin: 1, RegProtoMin: 2, Specified: true},
	)
	desc := fmt.Sprintf("%s %s %s port %d -> %s", cid, m.Protocol, host, m.HostPort, netip.AddrPortFrom(pod, m.ContainerPort))
	return svcRule{desc: desc, exprs: exprs}
}

// masqRules masquerade what reaches the pod through its host ports from a pod of its subnet
// (itself included) and, for IPv4, from 127.0.0.1.
func (f hostPortFamily) masqRules(cid string, pod netip.Prefix) []svcRule {
	daddr := []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.dst, Len: f.size},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: pod.Addr().AsSlice()},
	}
	subnet := pod.Masked()
	exprs := []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.src, Len: f.size},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: f.size, Mask: net.CIDRMask(subnet.Bits(), int(f.size)*8), Xor: make([]byte, f.size)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: subnet.Addr().AsSlice()},
	}
	exprs = append(exprs, daddr...)
	exprs = append(exprs,
		&expr.Ct{Key: expr.CtKeySTATUS, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(ctStatusDNAT), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
		&expr.Masq{})
	out := []svcRule{{desc: fmt.Sprintf("%s masquerade %s -> %s", cid, subnet, pod.Addr()), exprs: exprs}}
	if f.family == nftables.TableFamilyIPv4 {
		local := []expr.Any{
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.src, Len: f.size},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{127, 0, 0, 1}},
		}
		out = append(out, svcRule{desc: fmt.Sprintf("%s masquerade 127.0.0.1 -> %s", cid, pod.Addr()),
			exprs: append(append(local, slices.Clone(daddr)...), &expr.Masq{})})
	}
	return out
}

// ensureHostPortTable makes one family's table hold exactly chains (none: no table). The
// whole table is replaced in one netlink batch when anything differs, so a packet never
// sees it half written; nothing is sent when it matches. It reports whether it wrote.
func ensureHostPortTable(conn *nftables.Conn, f hostPortFamily, chains []svcChain) (bool, error) {
	t := &nftables.Table{Name: hostPortTable, Family: f.family}
	have, exists, err := tableDescriptions(conn, t, []string{"hostports", "prerouting", "output", "postrouting"})
	if err != nil {
		return false, err
	}
	if len(chains) == 0 {
		if !exists {
			return false, nil
		}
		conn.DelTable(t)
		if err := conn.Flush(); err != nil {
			return false, fmt.Errorf("delete nftables table %s %s: %w", f.name, hostPortTable, err)
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
		return false, fmt.Errorf("write nftables table %s %s: %w", f.name, hostPortTable, err)
	}
	return true, nil
}

// tableDescriptions reads a table back as descriptions (chains in the order given), whether
// it exists, and nil descriptions when its chains are not exactly those.
func tableDescriptions(conn *nftables.Conn, t *nftables.Table, order []string) ([]string, bool, error) {
	tables, err := conn.ListTablesOfFamily(t.Family)
	if err != nil {
		return nil, false, fmt.Errorf("list nftables tables: %w", err)
	}
	if !slices.ContainsFunc(tables, func(x *nftables.Table) bool { return x.Name == t.Name }) {
		return nil, false, nil
	}
	chains, err := conn.ListChainsOfTableFamily(t.Family)
	if err != nil {
		return nil, true, fmt.Errorf("list nftables chains: %w", err)
	}
	byName := map[string]*nftables.Chain{}
	for _, c := range chains {
		if c.Table.Name == t.Name {
			byName[c.Name] = c
		}
	}
	if len(byName) != len(order) {
		return nil, true, nil
	}
	var out []string
	for _, name := range order {
		c := byName[name]
		if c == nil {
			return nil, true, nil
		}
		out = append(out, "chain "+name)
		rules, err := conn.GetRules(t, c)
		if err != nil {
			return nil, true, fmt.Errorf("list rules of nftables chain %s %s: %w", t.Name, name, err)
		}
		for _, r := range rules {
			out = append(out, name+": "+string(r.UserData))
		}
	}
	return out, true, nil
}
