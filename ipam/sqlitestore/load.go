package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
)

// Load implements ipam.Store: it reads the whole state in one read transaction.
//
// Start-up time is mostly the allocations: see loadAllocations.
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
