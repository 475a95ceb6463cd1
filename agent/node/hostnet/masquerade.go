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

// The nftables objects edgeovn owns. Nothing outside this table is ever read for change or
// written.
const (
	natTable = "edgeovn"
	natChain = "postrouting"
)

func table() *nftables.Table {
	return &nftables.Table{Name: natTable, Family: nftables.TableFamilyIPv4}
}

func chain(t *nftables.Table) *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return &nftables.Chain{Name: natChain, Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource, Policy: &accept}
}

// ensureMasquerade makes the table hold exactly the chain and rules spec asks for. When they
// differ the whole table is replaced in one netlink batch (so packets never see it half
// written, and a chain someone added to it goes too); when they match nothing is sent.
func ensureMasquerade(_ context.Context, spec Spec, log *slog.Logger) error {
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("open nftables: %w", err)
	}
	exists, current, err := currentRules(conn)
	if err != nil {
		return err
	}
	if len(spec.Masquerade) == 0 {
		if !exists {
			return nil
		}
		conn.DelTable(table())
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("delete nftables table ip %s: %w", natTable, err)
		}
		log.Info("removed masquerade rules", "table", natTable)
		return nil
	}
	want := make([][]expr.Any, len(spec.Masquerade))
	for i, p := range spec.Masquerade {
		want[i] = masqueradeExprs(p, spec.Interface)
	}
	if reflect.DeepEqual(current, want) {
		return nil
	}
	t := conn.AddTable(table())
	if exists {
		conn.DelTable(t)
		conn.AddTable(t)
	}
	c := conn.AddChain(chain(t))
	for _, exprs := range want {
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, Exprs: exprs})
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("write nftables table ip %s: %w", natTable, err)
	}
	log.Info("wrote masquerade rules", "table", natTable, "prefixes", fmt.Sprint(spec.Masquerade))
	return nil
}

// currentRules reports whether the table exists and, when it holds exactly our chain as
// expected, the expressions of its rules in order; nil rules when the table must be
// rewritten.
func currentRules(conn *nftables.Conn) (bool, [][]expr.Any, error) {
	tables, err := conn.ListTablesOfFamily(nftables.TableFamilyIPv4)
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
	chains, err := conn.ListChainsOfTableFamily(nftables.TableFamilyIPv4)
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
		return true, nil, fmt.Errorf("list rules of nftables chain ip %s %s: %w", natTable, natChain, err)
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

// masqueradeExprs is `ip saddr p ip daddr != p oifname != ifname masquerade`: pod traffic to
// anything outside the pod network, leaving by any interface but the one back into OVN.
func masqueradeExprs(p netip.Prefix, ifname string) []expr.Any {
	mask := net.CIDRMask(p.Bits(), 32)
	network := p.Addr().AsSlice()
	ipv4Field := func(offset uint32, op expr.CmpOp) []expr.Any {
		return []expr.Any{
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: make([]byte, 4)},
			&expr.Cmp{Op: op, Register: 1, Data: network},
		}
	}
	name := make([]byte, unix.IFNAMSIZ)
	copy(name, ifname)
	out := ipv4Field(12, expr.CmpOpEq) // source address
	out = append(out, ipv4Field(16, expr.CmpOpNeq)...)
	return append(out,
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: name},
		&expr.Masq{},
	)
}
