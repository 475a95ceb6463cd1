package node

import (
	"fmt"

	"github.com/google/nftables"
)

// kubeProxyPresent reports whether kube-proxy has programmed this host: its nftables table
// (nftables mode) or its KUBE-SERVICES chain in the nat table (iptables mode through
// iptables-nft, Debian's default). kube-proxy with legacy iptables is not seen: set
// --kube-proxy=present there.
func kubeProxyPresent() (bool, error) {
	conn, err := nftables.New()
	if err != nil {
		return false, fmt.Errorf("open nftables: %w", err)
	}
	tables, err := conn.ListTables()
	if err != nil {
		return false, fmt.Errorf("list nftables tables: %w", err)
	}
	for _, t := range tables {
		if t.Name == "kube-proxy" {
			return true, nil
		}
	}
	chains, err := conn.ListChains()
	if err != nil {
		return false, fmt.Errorf("list nftables chains: %w", err)
	}
	for _, c := range chains {
		if c.Name == "KUBE-SERVICES" && c.Table.Name == "nat" {
			return true, nil
		}
	}
	return false, nil
}
