package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
)

// Load implements ipam.Store: it reads the whole state in one read transaction.
func (s *Store) Load(ctx context.Context) (ipam.State, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return ipam.State{}, fmt.Errorf("load ipam database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	var st ipam.State
	for _, step := range []func(context.Context, *sql.Tx, *ipam.State) error{loadSubnets, loadAllocations, loadReleased} {
		if err := step(ctx, tx, &st); err != nil {
			return ipam.State{}, fmt.Errorf("load ipam database %s: %w", s.path, err)
		}
	}
	return st, nil
}

func loadSubnets(ctx context.Context, tx *sql.Tx, st *ipam.State) error {
	rows, err := tx.QueryContext(ctx, "SELECT name, spec FROM subnets ORDER BY name")
	if err != nil {
		return fmt.Errorf("read subnets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, spec string
		if err := rows.Scan(&name, &spec); err != nil {
			return fmt.Errorf("read subnets: %w", err)
		}
		var sn ipam.Subnet
		if err := json.Unmarshal([]byte(spec), &sn); err != nil {
			return fmt.Errorf("decode subnet %s: %w", name, err)
		}
		sn.Name = name
		st.Subnets = append(st.Subnets, sn)
	}
	return rows.Err()
}

func loadAllocations(ctx context.Context, tx *sql.Tx, st *ipam.State) error {
	rows, err := tx.QueryContext(ctx, "SELECT pod, iface, subnet, ip4, ip6, mac, allocated FROM allocations")
	if err != nil {
		return fmt.Errorf("read allocations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a ipam.Allocation
		var ip4, ip6 sql.NullString
		var mac string
		var at int64
		if err := rows.Scan(&a.Owner.Pod, &a.Owner.Interface, &a.Subnet, &ip4, &ip6, &mac, &at); err != nil {
			return fmt.Errorf("read allocations: %w", err)
		}
		for _, ip := range []sql.NullString{ip4, ip6} {
			if !ip.Valid {
				continue
			}
			addr, err := netip.ParseAddr(ip.String)
			if err != nil {
				return fmt.Errorf("decode address of %s: %w", a.Owner, err)
			}
			a.IPs = append(a.IPs, addr)
		}
		if a.MAC, err = net.ParseMAC(mac); err != nil {
			return fmt.Errorf("decode mac of %s: %w", a.Owner, err)
		}
		a.Allocated = time.Unix(0, at).UTC()
		st.Allocations = append(st.Allocations, a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read allocations: %w", err)
	}
	return nil
}

func loadReleased(ctx context.Context, tx *sql.Tx, st *ipam.State) error {
	rows, err := tx.QueryContext(ctx, "SELECT subnet, ip, released FROM released")
	if err != nil {
		return fmt.Errorf("read released addresses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r ipam.Released
		var ip string
		var at int64
		if err := rows.Scan(&r.Subnet, &ip, &at); err != nil {
			return fmt.Errorf("read released addresses: %w", err)
		}
		if r.IP, err = netip.ParseAddr(ip); err != nil {
			return fmt.Errorf("decode released address in %s: %w", r.Subnet, err)
		}
		r.At = time.Unix(0, at).UTC()
		st.Released = append(st.Released, r)
	}
	return rows.Err()
}
