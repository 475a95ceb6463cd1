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
//
// Start-up time is mostly this, so rows are compact (integers and blobs, no parsing), the
// allocations are read subnet by subnet (no subnet name per row), the owner comes back as
// one string (one allocation per row, not two), and addresses and MACs are carved out of
// one backing array each instead of two small allocations per row.
func (s *Store) Load(ctx context.Context) (ipam.State, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return ipam.State{}, fmt.Errorf("load ipam database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	var st ipam.State
	for _, step := range []func(context.Context, *sql.Tx, *ipam.State) error{loadSubnets, loadPools, loadAllocations, loadReleased} {
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

func loadPools(ctx context.Context, tx *sql.Tx, st *ipam.State) error {
	rows, err := tx.QueryContext(ctx, "SELECT subnet, name, spec FROM pools ORDER BY subnet, name")
	if err != nil {
		return fmt.Errorf("read pools: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var subnet, name, spec string
		if err := rows.Scan(&subnet, &name, &spec); err != nil {
			return fmt.Errorf("read pools: %w", err)
		}
		var p ipam.IPPool
		if err := json.Unmarshal([]byte(spec), &p); err != nil {
			return fmt.Errorf("decode pool %s of subnet %s: %w", name, subnet, err)
		}
		p.Name = name
		for i := range st.Subnets {
			if st.Subnets[i].Name == subnet {
				st.Subnets[i].Pools = append(st.Subnets[i].Pools, p)
			}
		}
	}
	return rows.Err()
}

// allocBuf hands out the slices of loaded allocations from shared backing arrays.
type allocBuf struct {
	ips  []netip.Addr
	macs []byte
}

func (b *allocBuf) take(nIPs int) ([]netip.Addr, net.HardwareAddr) {
	ips := b.ips[:0:nIPs]
	b.ips = b.ips[nIPs:]
	mac := net.HardwareAddr(b.macs[:6:6])
	b.macs = b.macs[6:]
	return ips, mac
}

func loadAllocations(ctx context.Context, tx *sql.Tx, st *ipam.State) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM allocations").Scan(&n); err != nil {
		return fmt.Errorf("count allocations: %w", err)
	}
	st.Allocations = make([]ipam.Allocation, 0, n)
	buf := &allocBuf{ips: make([]netip.Addr, 2*n), macs: make([]byte, 6*n)}
	names, err := orphanSubnets(ctx, tx)
	if err != nil {
		return err
	}
	for _, sn := range st.Subnets {
		names = append(names, sn.Name)
	}
	for _, name := range names {
		if err := loadSubnetAllocations(ctx, tx, name, buf, st); err != nil {
			return err
		}
	}
	return nil
}

// orphanSubnets names the subnets that allocations refer to but the subnets table lacks
// (only a damaged or hand-edited file has them); they are loaded too, for the IPAM to report.
func orphanSubnets(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT DISTINCT subnet FROM allocations WHERE subnet NOT IN (SELECT name FROM subnets)")
	if err != nil {
		return nil, fmt.Errorf("read subnets of allocations: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("read subnets of allocations: %w", err)
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

func loadSubnetAllocations(ctx context.Context, tx *sql.Tx, subnet string, buf *allocBuf, st *ipam.State) error {
	rows, err := tx.QueryContext(ctx, `SELECT octet_length(pod), pod || iface, ip4, ip6, mac, allocated
		FROM allocations WHERE subnet = ?`, subnet)
	if err != nil {
		return fmt.Errorf("read allocations of subnet %s: %w", subnet, err)
	}
	defer rows.Close()
	var (
		podLen, mac, at int64
		owner           string
		ip4             sql.NullInt64
		ip6             []byte
	)
	for rows.Next() {
		ip6 = ip6[:0]
		if err := rows.Scan(&podLen, &owner, &ip4, &ip6, &mac, &at); err != nil {
			return fmt.Errorf("read allocations of subnet %s: %w", subnet, err)
		}
		if podLen < 0 || int(podLen) > len(owner) {
			return fmt.Errorf("read allocations of subnet %s: bad owner %q", subnet, owner)
		}
		a := ipam.Allocation{Subnet: subnet, Owner: ipam.Owner{Pod: owner[:podLen], Interface: owner[podLen:]},
			Allocated: time.Unix(0, at).UTC()}
		a.IPs, a.MAC = buf.take(2)
		if ip4.Valid {
			a.IPs = append(a.IPs, ip4FromValue(ip4.Int64))
		}
		if ip6 != nil {
			addr, ok := netip.AddrFromSlice(ip6)
			if !ok || !addr.Is6() {
				return fmt.Errorf("decode ipv6 address of %s: %d octets", a.Owner, len(ip6))
			}
			a.IPs = append(a.IPs, addr)
		}
		putMAC(a.MAC, mac)
		st.Allocations = append(st.Allocations, a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read allocations of subnet %s: %w", subnet, err)
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
		var ip []byte
		var at int64
		if err := rows.Scan(&r.Subnet, &ip, &at); err != nil {
			return fmt.Errorf("read released addresses: %w", err)
		}
		var ok bool
		if r.IP, ok = netip.AddrFromSlice(ip); !ok {
			return fmt.Errorf("decode released address in %s: %d octets", r.Subnet, len(ip))
		}
		r.At = time.Unix(0, at).UTC()
		st.Released = append(st.Released, r)
	}
	return rows.Err()
}
