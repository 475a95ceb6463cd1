package hostnet

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// svcTable is the nftables table of the NodePorts edgeovn serves when kube-proxy does not.
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

// svcChains is the whole table spec asks for, chain by chain.
func svcChains(spec ServiceSpec) []svcChain {
	jump := []svcRule{{desc: "local jump nodeports", exprs: append(localDestination(),
		&expr.Verdict{Kind: expr.VerdictJump, Chain: "nodeports"})}}
	var nodeports []svcRule
	for _, np := range spec.NodePorts {
		nodeports = append(nodeports, nodePortRules(np)...)
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
		{name: "prerouting", hook: nftables.ChainHookPrerouting, prio: nftables.ChainPriorityNATDest, rules: jump},
		{name: "output", hook: nftables.ChainHookOutput, prio: nftables.ChainPriorityNATDest, rules: jump},
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

// nodePortRules DNATs the node port: to the ClusterIP (marked for masquerade), or to this
// host's endpoints, spread evenly (rule i of n matches one time in n-i, as kube-proxy's
// iptables mode does).
func nodePortRules(np NodePort) []svcRule {
	match := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{l4proto[np.Protocol]}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(np.Port)},
	}
	desc := np.describe()
	if !np.LocalOnly {
		mark := []expr.Any{
			&expr.Meta{Key: expr.MetaKeyMARK, Register: 1},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
				Mask: binaryutil.NativeEndian.PutUint32(^uint32(masqMark)), Xor: binaryutil.NativeEndian.PutUint32(masqMark)},
			&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: 1},
		}
		return []svcRule{{desc: desc, exprs: append(append(slices.Clone(match), mark...), dnat(np.ClusterIP.Addr().AsSlice(), np.ClusterIP.Port())...)}}
	}
	var out []svcRule
	for i, ep := range np.Local {
		exprs := slices.Clone(match)
		if left := len(np.Local) - i; left > 1 {
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
	log.Info("wrote node port rules", "table", svcTable, "node_ports", len(spec.NodePorts))
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
	for _, name := range []string{"nodeports", "prerouting", "output", "postrouting"} {
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
	if len(byName) != 4 {
		return nil, true, nil
	}
	return out, true, nil
}
