package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/edgeovn/edgeovn/ipam"
)

// Commit implements ipam.Store: all changes in one immediate transaction, durable (WAL,
// synchronous=FULL) when it returns nil, none applied when it returns an error.
func (s *Store) Commit(ctx context.Context, changes []ipam.Change) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin ipam transaction: %w", err)
	}
	defer tx.Rollback()
	t := txn{ctx: ctx, tx: tx, stmts: &s.stmts}
	for _, c := range changes {
		if err := t.apply(c); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit ipam transaction: %w", err)
	}
	return nil
}

func (t txn) apply(c ipam.Change) error {
	switch {
	case c.PutSubnet != nil:
		return t.putSubnet(*c.PutSubnet)
	case c.DeleteSubnet != "":
		what := "delete subnet " + c.DeleteSubnet
		if err := t.exec(stmtDeleteSubnet, what, c.DeleteSubnet); err != nil {
			return err
		}
		return t.exec(stmtDeleteSubnetReleased, what, c.DeleteSubnet)
	case c.PutAllocation != nil:
		return t.putAllocation(*c.PutAllocation)
	case c.Release != nil:
		return t.release(c.Release)
	}
	return fmt.Errorf("empty ipam change")
}

func (t txn) putSubnet(sn ipam.Subnet) error {
	spec, err := json.Marshal(sn)
	if err != nil {
		return fmt.Errorf("encode subnet %s: %w", sn.Name, err)
	}
	return t.exec(stmtPutSubnet, "store subnet "+sn.Name, sn.Name, string(spec))
}

func (t txn) putAllocation(a ipam.Allocation) error {
	what := "store allocation of " + a.Owner.String()
	if err := t.exec(stmtDeleteAllocation, what, a.Owner.Pod, a.Owner.Interface); err != nil {
		return err
	}
	var ip4, ip6 any // NULL unless set
	for _, ip := range a.IPs {
		if ip.Is4() {
			ip4 = ip.String()
		} else {
			ip6 = ip.String()
		}
		if err := t.exec(stmtUnrelease, what, a.Subnet, ip.String()); err != nil {
			return err
		}
	}
	return t.exec(stmtInsertAllocation, what,
		a.Owner.Pod, a.Owner.Interface, a.Subnet, ip4, ip6, a.MAC.String(), a.Allocated.UnixNano())
}

func (t txn) release(r *ipam.ReleaseChange) error {
	a := r.Allocation
	what := "release allocation of " + a.Owner.String()
	if err := t.exec(stmtDeleteAllocation, what, a.Owner.Pod, a.Owner.Interface); err != nil {
		return err
	}
	for _, ip := range a.IPs {
		if err := t.exec(stmtRelease, what, a.Subnet, ip.String(), r.At.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}
