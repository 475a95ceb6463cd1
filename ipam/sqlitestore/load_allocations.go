package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
)

// Allocations are read in chunks of rowids, each chunk as one value that SQLite concatenates
// from the rows' rec column (see recExpr): taking seven columns of a row out through the
// driver costs about twice what the whole row costs inside SQLite, and building the text at
// load four times what reading it stored costs. Start-up time is mostly this read.
const (
	chunkRows = 1 << 14
	chunkSQL  = "SELECT group_concat(rec, '') FROM allocations WHERE rowid BETWEEN ? AND ?"
)

func loadAllocations(ctx context.Context, tx *sql.Tx, st *ipam.State) error {
	var n int
	var first, last sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT count(*), min(rowid), max(rowid) FROM allocations").Scan(&n, &first, &last); err != nil {
		return fmt.Errorf("count allocations: %w", err)
	}
	if n == 0 {
		return nil
	}
	st.Allocations = make([]ipam.Allocation, 0, n)
	p := &rowParser{names: map[string]string{}, st: st}
	for lo := first.Int64; lo <= last.Int64; lo += chunkRows {
		var chunk sql.NullString
		if err := tx.QueryRowContext(ctx, chunkSQL, lo, lo+chunkRows-1).Scan(&chunk); err != nil {
			return fmt.Errorf("read allocations: %w", err)
		}
		if err := p.parse(chunk.String); err != nil {
			return fmt.Errorf("read allocations: %w", err)
		}
	}
	return nil
}

// rowParser decodes chunks into st.Allocations.
type rowParser struct {
	s     string
	names map[string]string // one string per subnet name, not per row
	buf   allocBuf
	st    *ipam.State
}

func (p *rowParser) parse(chunk string) error {
	p.s = chunk
	for p.s != "" {
		if err := p.row(); err != nil {
			return err
		}
	}
	return nil
}

func (p *rowParser) row() error {
	var f [7]string
	for i := range f {
		j := strings.IndexByte(p.s, ' ')
		if j < 0 {
			return fmt.Errorf("truncated allocation row")
		}
		f[i], p.s = p.s[:j], p.s[j+1:]
	}
	var v [7]int64
	for _, i := range []int{0, 1, 2, 4, 5, 6} {
		var err error
		if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return fmt.Errorf("allocation row field %d: %w", i, err)
		}
	}
	ls, lp, li := int(v[4]), int(v[5]), int(v[6])
	if ls < 0 || lp < 0 || li < 0 || ls+lp+li > len(p.s) {
		return fmt.Errorf("allocation row: bad name lengths")
	}
	name, ok := p.names[p.s[:ls]]
	if !ok {
		name = strings.Clone(p.s[:ls])
		p.names[name] = name
	}
	owner := strings.Clone(p.s[ls : ls+lp+li]) // one string per row, not pinning the chunk
	p.s = p.s[ls+lp+li:]
	a := ipam.Allocation{Subnet: name, Owner: ipam.Owner{Pod: owner[:lp], Interface: owner[lp:]},
		Allocated: time.Unix(0, v[1]).UTC()}
	a.IPs, a.MAC = p.buf.take()
	if v[2] >= 0 {
		a.IPs = append(a.IPs, ip4FromValue(v[2]))
	}
	if f[3] != "" {
		var b [16]byte
		if len(f[3]) != 32 {
			return fmt.Errorf("ipv6 address of %s: %d hex digits", a.Owner, len(f[3]))
		}
		if _, err := hex.Decode(b[:], []byte(f[3])); err != nil {
			return fmt.Errorf("ipv6 address of %s: %w", a.Owner, err)
		}
		a.IPs = append(a.IPs, netip.AddrFrom16(b))
	}
	putMAC(a.MAC, v[0])
	p.st.Allocations = append(p.st.Allocations, a)
	return nil
}

// allocBuf hands out the slices of loaded allocations from shared backing arrays, allocated
// a chunk at a time.
type allocBuf struct {
	ips  []netip.Addr
	macs []byte
}

func (b *allocBuf) take() ([]netip.Addr, net.HardwareAddr) {
	if len(b.macs) < 6 {
		b.ips = make([]netip.Addr, 2*chunkRows)
		b.macs = make([]byte, 6*chunkRows)
	}
	ips := b.ips[:0:2]
	b.ips = b.ips[2:]
	mac := net.HardwareAddr(b.macs[:6:6])
	b.macs = b.macs[6:]
	return ips, mac
}
