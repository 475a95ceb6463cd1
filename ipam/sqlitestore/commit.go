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
	if s.readOnly {
		return fmt.Errorf("commit to ipam database %s: %w", s.path, ErrReadOnly)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin ipam transaction: %w", err)
	}
	defer tx.Rollback()
	t := &txn{ctx: ctx, tx: tx, prepared: &s.stmts}
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

func (t *txn) apply(c ipam.Change) error {
	switch {
	case c.PutSubnet != nil:
		return t.putSubnet(*c.PutSubnet)
	case c.DeleteSubnet != "":
		what := "delete subnet " + c.DeleteSubnet
		for _, st := range []int{stmtDeleteSubnet, stmtDeleteSubnetReleased} {
			if err := t.exec(st, what, c.DeleteSubnet); err != nil {
				return err
			}
		}
		return nil
	case c.PutAllocation != nil:
		return t.putAllocation(*c.PutAllocation)
	case c.Release != nil:
		return t.release(c.Release)
	case c.PutReleased != nil:
		r := c.PutReleased
		return t.exec(stmtRelease, "record released address "+r.IP.String(), r.Subnet, ipBlob(r.IP), r.At.UnixNano())
	}
	return fmt.Errorf("ipam change sets no field: %w", ipam.ErrInvalid)
}

func (t *txn) putSubnet(sn ipam.Subnet) error {
	spec, err := json.Marshal(sn)
	if err != nil {
		return fmt.Errorf("encode subnet %s: %w", sn.Name, err)
	}
	return t.exec(stmtPutSubnet, "store subnet "+sn.Name, sn.Name, string(spec))
}

func (t *txn) putAllocation(a ipam.Allocation) error {
	what := "store allocation of " + a.Owner.String()
	if err := t.exec(stmtDeleteAllocation, what, a.Owner.Pod, a.Owner.Interface); err != nil {
		return err
	}
	var ip4, ip6 any // NULL unless set
	for _, ip := range a.IPs {
		if ip.Is4() {
			ip4 = ip4Value(ip)
		} else {
			ip6 = ipBlob(ip)
		}
		if err := t.exec(stmtUnrelease, what, a.Subnet, ipBlob(ip)); err != nil {
			return err
		}
	}
	return t.exec(stmtInsertAllocation, what,
		a.Owner.Pod, a.Owner.Interface, a.Subnet, ip4, ip6, macValue(a.MAC), a.Allocated.UnixNano())
}

func (t *txn) release(r *ipam.ReleaseChange) error {
	a := r.Allocation
	what := "release allocation of " + a.Owner.String()
	if err := t.exec(stmtDeleteAllocation, what, a.Owner.Pod, a.Owner.Interface); err != nil {
		return err
	}
	for _, ip := range a.IPs {
		if err := t.exec(stmtRelease, what, a.Subnet, ipBlob(ip), r.At.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}
