package hostnet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/nftables"
)

// ownedTables are edgeovn's nftables tables as nft names them.
var ownedTables = []string{"ip " + natTable, "ip6 " + natTable, "ip " + svcTable, "ip6 " + svcTable, "ip " + hostPortTable, "ip6 " + hostPortTable}

var families = map[string]nftables.TableFamily{"ip": nftables.TableFamilyIPv4, "ip6": nftables.TableFamilyIPv6}

// OwnedTables lists the nftables tables edgeovn writes that exist now ("ip edgeovn",
// "ip6 edgeovn", "ip/ip6 edgeovn-svc", "ip/ip6 edgeovn-hostport"), for a clean-up.
func OwnedTables() ([]string, error) {
	conn, err := nftables.New()
	if err != nil {
		return nil, fmt.Errorf("open nftables: %w", err)
	}
	var out []string
	for _, fname := range []string{"ip", "ip6"} {
		tables, err := conn.ListTablesOfFamily(families[fname])
		if err != nil {
			return nil, fmt.Errorf("list nftables tables: %w", err)
		}
		for _, t := range tables {
			if name := fname + " " + t.Name; slices.Contains(ownedTables, name) {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// DeleteTable deletes one of edgeovn's tables, named as OwnedTables names it ("ip edgeovn");
// any other name is refused.
func DeleteTable(name string) error {
	if !slices.Contains(ownedTables, name) {
		return fmt.Errorf("%w: table %s is not edgeovn's", ErrInvalid, name)
	}
	family, table, _ := strings.Cut(name, " ")
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("open nftables: %w", err)
	}
	conn.DelTable(&nftables.Table{Name: table, Family: families[family]})
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("delete nftables table %s: %w", name, err)
	}
	return nil
}
