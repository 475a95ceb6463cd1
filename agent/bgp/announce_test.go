package bgp

import (
	"net/netip"
	"slices"
	"testing"
)

func pfx(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestAnnouncements(t *testing.T) {
	subnets := []Subnet{
		{Name: "cl", CIDRs: pfx("10.50.0.0/24", "fd00:50::/64"), Policy: PolicyCluster},
		{Name: "tr", CIDRs: pfx("10.51.0.0/24"), Policy: PolicyTrue},
		{Name: "lo", CIDRs: pfx("10.52.0.0/24"), Policy: PolicyLocal},
		{Name: "off", CIDRs: pfx("10.53.0.0/24")},
	}
	for _, c := range []struct {
		name string
		s    State
		want []netip.Prefix
		bad  int
	}{
		{name: "nothing annotated", s: State{Subnets: []Subnet{{Name: "off", CIDRs: pfx("10.53.0.0/24")}},
			Pods: []Pod{{Name: "a", Switch: "off", IPs: addrs("10.53.0.5")}}}},
		{name: "cluster and true subnets: their CIDRs; local: this host's pods in it", s: State{Subnets: subnets,
			Pods: []Pod{{Name: "a", Switch: "lo", IPs: addrs("10.52.0.7")}, {Name: "b", Switch: "off", IPs: addrs("10.53.0.8")}}},
			want: pfx("10.50.0.0/24", "10.51.0.0/24", "10.52.0.7/32", "fd00:50::/64")},
		{name: "cluster subnets: also this host's pods in them", s: State{Subnets: subnets,
			Pods: []Pod{{Name: "a", Switch: "cl", IPs: addrs("10.50.0.7", "fd00:50::7")}, {Name: "b", Switch: "tr", IPs: addrs("10.51.0.8")}}},
			want: pfx("10.50.0.0/24", "10.50.0.7/32", "10.51.0.0/24", "10.51.0.8/32", "fd00:50::/64", "fd00:50::7/128")},
		{name: "annotated pods: host routes", s: State{Subnets: subnets[3:],
			Pods: []Pod{{Name: "a", Switch: "off", IPs: addrs("10.53.0.5", "fd00:53::5"), Policy: PolicyLocal},
				{Name: "b", Switch: "off", IPs: addrs("10.53.0.6"), Policy: PolicyTrue}}},
			want: pfx("10.53.0.5/32", "10.53.0.6/32", "fd00:53::5/128")},
		{name: "services only with cluster IPs on", s: State{Services: []Service{{Name: "s", ClusterIPs: addrs("10.43.0.20"), Policy: PolicyTrue}}}},
		{name: "services with cluster IPs", s: State{ClusterIPs: true, Services: []Service{{Name: "s", ClusterIPs: addrs("10.43.0.20"), Policy: PolicyTrue},
			{Name: "u", ClusterIPs: addrs("10.43.0.21")}}}, want: pfx("10.43.0.20/32")},
		{name: "a bad value drops that object only", s: State{ClusterIPs: true,
			Subnets:  []Subnet{subnets[0], {Name: "typo", CIDRs: pfx("10.54.0.0/24"), Policy: "yes"}},
			Pods:     []Pod{{Name: "p", Switch: "cl", IPs: addrs("10.50.0.9"), Policy: "True"}, {Name: "q", Switch: "off", IPs: addrs("10.53.0.9"), Policy: PolicyLocal}},
			Services: []Service{{Name: "s", ClusterIPs: addrs("10.43.0.20"), Policy: "1"}}},
			want: pfx("10.50.0.0/24", "10.53.0.9/32", "fd00:50::/64"), bad: 3},
		// p's value is bad: it is not announced even though its Subnet would announce it.
	} {
		t.Run(c.name, func(t *testing.T) {
			got, bad := Announcements(c.s)
			if !slices.Equal(got, c.want) {
				t.Errorf("announced %v, want %v", got, c.want)
			}
			if len(bad) != c.bad {
				t.Errorf("bad values %v, want %d", bad, c.bad)
			}
			for _, b := range bad {
				if b.Value == "" || b.Error() == "" {
					t.Errorf("bad value %+v does not say what", b)
				}
			}
		})
	}
}
