package northbound

import (
	"errors"
	"maps"
	"net/netip"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

// TestEnsureSwitchMulticast: {snooping before, wanted} -> {other_config after, writes} against
// a real ovsdb-server. The switch's other keys (subnet, a foreign one) stay; an unchanged
// spec writes nothing; off removes the four keys.
func TestEnsureSwitchMulticast(t *testing.T) {
	on := SwitchMulticastSpec{Switch: "ovn-default", Snoop: true, QuerierIP: netip.MustParseAddr("10.42.0.1"), QuerierMAC: "0a:58:0a:2a:00:01"}
	moved := on
	moved.QuerierIP = netip.MustParseAddr("10.42.0.254")
	off := SwitchMulticastSpec{Switch: "ovn-default"}
	base := map[string]string{"subnet": "10.42.0.0/16", "foreign": "x"}
	withOn := func(ip string) map[string]string {
		m := maps.Clone(base)
		m[McastSnoop], m[McastQuerier], m[McastIP4Src], m[McastEthSrc] = "true", "true", ip, "0a:58:0a:2a:00:01"
		return m
	}
	tests := []struct {
		name    string
		initial *SwitchMulticastSpec
		want    SwitchMulticastSpec
		writes  int64
		after   map[string]string
	}{
		{"on", nil, on, 1, withOn("10.42.0.1")},
		{"unchanged: no write", &on, on, 0, withOn("10.42.0.1")},
		{"querier address repaired", &on, moved, 1, withOn("10.42.0.254")},
		{"off: the four keys removed, the others kept", &on, off, 1, base},
		{"off and nothing there: no write", nil, off, 0, base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ensureClusterAndSubnet(t, f)
			f.srv.Run(t, "ovn-nbctl", "set", "Logical_Switch", "ovn-default", "other_config:foreign=x")
			f.waitCache(t, "the foreign key", func() bool {
				ls, _ := f.c.switchByName(f.ctx, "ovn-default")
				return ls != nil && ls.OtherConfig["foreign"] == "x"
			})
			if tt.initial != nil {
				if _, err := f.c.EnsureSwitchMulticast(f.ctx, *tt.initial); err != nil {
					t.Fatal(err)
				}
			}
			f.mustWrite(t, tt.writes, tt.name, func() error {
				_, err := f.c.EnsureSwitchMulticast(f.ctx, tt.want)
				return err
			})
			f.waitCache(t, "other_config", func() bool {
				ls, _ := f.c.switchByName(f.ctx, "ovn-default")
				return ls != nil && maps.Equal(ls.OtherConfig, tt.after)
			})
		})
	}
	f := newFixture(t)
	if _, err := f.c.EnsureSwitchMulticast(f.ctx, on); !errors.Is(err, ovn.ErrNotFound) {
		t.Errorf("missing switch: %v, want ErrNotFound", err)
	}
}
