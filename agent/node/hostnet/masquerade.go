package hostnet

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"reflect"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// The nftables objects edgeovn owns: "ip edgeovn" and "ip6 edgeovn", one postrouting chain
// each. Nothing outside these tables is ever read for change or written.
const (
	natTable = "edgeovn"
	natChain = "postrouting"
)

func table(family nftables.TableFamily) *nftables.Table {
	return &nftables.Table{Name: natTable, Family: family}
}

func chain(t *nftables.Table) *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return &nftables.Chain{Name: natChain, Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource, Policy: &accept}
}

// natFamilies are the families masqueraded, each with its prefixes picked from a spec.
var natFamilies = []struct {
	family nftables.TableFamily
	name   string
	is     func(netip.Addr) bool
}{{nftables.TableFamilyIPv4, "ip", netip.Addr.Is4}, {nftables.TableFamilyIPv6, "ip6", netip.Addr.Is6}}

// ensureMasquerade makes each family's table hold exactly the chain and rules spec asks for
// (the IPv4 prefixes in "ip edgeovn", the IPv6 ones in "ip6 edgeovn"; a family without
// prefixes has no table). When they differ the whole table is replaced in one netlink batch
// (so packets never see it half written, and a chain someone added to it goes too); when
// they match nothing is sent.
func ensureMasquerade(_ context.Context, spec Spec, log *slog.Logger) error {
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("open nftables: %w", err)
	}
	for _, f := range natFamilies {
		var prefixes []netip.Prefix
		for _, p := range spec.Masquerade {
			if f.is(p.Addr()) {
				prefixes = append(prefixes, p)
			}
		}
		if err := ensureMasqueradeTable(conn, masqRequest{family: f.family, name: f.name, prefixes: prefixes, ifname: spec.Interface}, log); err != nil {
			return err
		}
	}
	return nil
}

// masqRequest is one family's masquerade table.
type masqRequest struct {
	family   nftables.TableFamily
	name     string // "ip" or "ip6", for messages
	prefixes []netip.Prefix
	ifname   string
}

func ensureMasqueradeTable(conn *nftables.Conn, req masqRequest, log *slog.Logger) error {
	exists, current, err := currentRules(conn, req.family)
	if err != nil {
		return err
	}
	if len(req.prefixes) == 0 {
		if !exists {
			return nil
		}
		conn.DelTable(table(req.family))
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("delete nftables table %s %s: %w", req.name, natTable, err)
		}
		log.Info("removed masquerade rules", "table", req.name+" "+natTable)
		return nil
	}
	want := make([][]expr.Any, len(req.prefixes))
	for i, p := range req.prefixes {
		want[i] = masqueradeExprs(p, req.ifname)
	}
	if reflect.DeepEqual(current, want) {
		return nil
	}
	t := conn.AddTable(table(req.family))
	if exists {
		conn.DelTable(t)
		conn.AddTable(t)
	}
	c := conn.AddChain(chain(t))
	for _, exprs := range want {
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, Exprs: exprs})
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("write nftables table %s %s: %w", req.name, natTable, err)
	}
	log.Info("wrote masquerade rules", "table", req.name+" "+natTable, "prefixes", fmt.Sprint(req.prefixes))
	return nil
}

// currentRules reports whether the family's table exists and, when it holds exactly our
// chain as expected, the expressions of its rules in order; nil rules when the table must be
// rewritten.
func currentRules(conn *nftables.Conn, family nftables.TableFamily) (bool, [][]expr.Any, error) {
	tables, err := conn.ListTablesOfFamily(family)
	if err != nil {
		return false, nil, fmt.Errorf("list nftables tables: %w", err)
	}
	var t *nftables.Table
	for _, tb := range tables {
		if tb.Name == natTable {
			t = tb
		}
	}
	if t == nil {
		return false, nil, nil
	}
	chains, err := conn.ListChainsOfTableFamily(family)
	if err != nil {
		return true, nil, fmt.Errorf("list nftables chains: %w", err)
	}
	var ours []*nftables.Chain
	for _, c := range chains {
		if c.Table.Name == natTable {
			ours = append(ours, c)
		}
	}
	if len(ours) != 1 || !sameChain(ours[0], chain(t)) {
		return true, nil, nil
	}
	rules, err := conn.GetRules(t, ours[0])
	if err != nil {
		return true, nil, fmt.Errorf("list rules of nftables chain %s %s: %w", natTable, natChain, err)
	}
	out := make([][]expr.Any, len(rules))
	for i, r := range rules {
		out[i] = r.Exprs
	}
	return true, out, nil
}

func sameChain(have, want *nftables.Chain) bool {
	return have.Name == want.Name && have.Type == want.Type &&
		have.Hooknum != nil && *have.Hooknum == *want.Hooknum &&
		have.Priority != nil && *have.Priority == *want.Priority &&
		(have.Policy == nil || *have.Policy == *want.Policy)
}

// masqueradeExprs is `ip saddr p ip daddr != p oifname != ifname masquerade` (ip6 for an
// IPv6 p): pod traffic to anything outside the pod network, leaving by any interface but the
// one back into OVN.
func masqueradeExprs(p netip.Prefix, ifname string) []expr.Any {
	size, src, dst := uint32(4), uint32(12), uint32(16) // IPv4 header offsets
	if p.Addr().Is6() {
		size, src, dst = 16, 8, 24
	}
	mask := net.CIDRMask(p.Bits(), int(size)*8)
	network := p.Masked().Addr().AsSlice()
	field := func(offset uint32, op expr.CmpOp) []expr.Any {
		return []expr.Any{
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: size},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: size, Mask: mask, Xor: make([]byte, size)},
			&expr.Cmp{Op: op, Register: 1, Data: network},
		}
	}
	name := make([]byte, unix.IFNAMSIZ)
	copy(name, ifname)
	out := field(src, expr.CmpOpEq)
	out = append(out, field(dst, expr.CmpOpNeq)...)
	return append(out,
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: name},
		&expr.Masq{},
	)
}
