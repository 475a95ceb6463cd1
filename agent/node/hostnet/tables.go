package hostnet

import (
	"fmt"
	"slices"

	"github.com/google/nftables"
)

// OwnedTables lists the nftables tables edgeovn writes that exist now ("ip edgeovn",
// "ip edgeovn-svc"), for a clean-up.
func OwnedTables() ([]string, error) {
	conn, err := nftables.New()
	if err != nil {
		return nil, fmt.Errorf("open nftables: %w", err)
	}
	tables, err := conn.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return nil, fmt.Errorf("list nftables tables: %w", err)
	}
	var out []string
	for _, t := range tables {
		if slices.Contains([]string{natTable, svcTable}, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out, nil
}

// DeleteTable deletes one of edgeovn's IPv4 tables; any other name is refused.
func DeleteTable(name string) error {
	if name != natTable && name != svcTable {
		return fmt.Errorf("%w: table ip %s is not edgeovn's", ErrInvalid, name)
	}
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("open nftables: %w", err)
	}
	conn.DelTable(&nftables.Table{Name: name, Family: nftables.TableFamilyIPv4})
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("delete nftables table ip %s: %w", name, err)
	}
	return nil
}
