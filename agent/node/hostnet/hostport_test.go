package hostnet

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/nftables"
)

func TestParsePortMapping(t *testing.T) {
	good := []struct {
		hostPort, containerPort int
		protocol, hostIP        string
		want                    PortMapping
	}{
		{18080, 8080, "TCP", "", PortMapping{HostPort: 18080, ContainerPort: 8080, Protocol: "tcp"}},
		{53, 5353, "udp", "10.0.0.1", PortMapping{HostPort: 53, ContainerPort: 5353, Protocol: "udp", HostIP: netip.MustParseAddr("10.0.0.1")}},
		{9, 9, "", "::ffff:10.0.0.1", PortMapping{HostPort: 9, ContainerPort: 9, Protocol: "tcp", HostIP: netip.MustParseAddr("10.0.0.1")}},
		{65535, 1, "sctp", "fd00::1", PortMapping{HostPort: 65535, ContainerPort: 1, Protocol: "sctp", HostIP: netip.MustParseAddr("fd00::1")}},
	}
	for _, c := range good {
		got, err := ParsePortMapping(c.hostPort, c.containerPort, c.protocol, c.hostIP)
		if err != nil || got != c.want {
			t.Errorf("ParsePortMapping(%d, %d, %q, %q) = %+v, %v; want %+v", c.hostPort, c.containerPort, c.protocol, c.hostIP, got, err, c.want)
		}
	}
	bad := []struct {
		hostPort, containerPort int
		protocol, hostIP, names string
	}{
		{0, 8080, "tcp", "", "hostPort must be 1-65535"},
		{65536, 8080, "tcp", "", "hostPort must be 1-65535"},
		{18080, 0, "tcp", "", "containerPort must be 1-65535"},
		{18080, -1, "tcp", "", "containerPort must be 1-65535"},
		{18080, 8080, "icmp", "", "protocol must be tcp, udp or sctp"},
		{18080, 8080, "tcp", "10.0.0.300", "hostIP is not an IP address"},
		{18080, 8080, "tcp", "fe80::1%eth0", "hostIP is not an IP address"},
	}
	for _, c := range bad {
		_, err := ParsePortMapping(c.hostPort, c.containerPort, c.protocol, c.hostIP)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.names) || !strings.Contains(err.Error(), "hostPort "+strconv.Itoa(c.hostPort)) {
			t.Errorf("ParsePortMapping(%d, %d, %q, %q) error %v; want ErrInvalid naming the mapping and %q", c.hostPort, c.containerPort, c.protocol, c.hostIP, err, c.names)
		}
	}
}

func mapping(proto string, host, cont uint16, hostIP string) PortMapping {
	m := PortMapping{Protocol: proto, HostPort: host, ContainerPort: cont}
	if hostIP != "" {
		m.HostIP = netip.MustParseAddr(hostIP)
	}
	return m
}

func TestPodPortsValidate(t *testing.T) {
	ips := []netip.Prefix{netip.MustParsePrefix("10.42.0.5/16")}
	cases := map[string]struct {
		p     PodPorts
		names string
	}{
		"same host port twice": {PodPorts{ContainerID: "c1", IPs: ips, Mappings: []PortMapping{mapping("tcp", 80, 8080, ""), mapping("tcp", 80, 9090, "")}},
			"take the same host port"},
		"0.0.0.0 and every address": {PodPorts{ContainerID: "c1", IPs: ips, Mappings: []PortMapping{mapping("udp", 53, 53, "0.0.0.0"), mapping("udp", 53, 54, "")}},
			"take the same host port"},
		"no container":  {PodPorts{IPs: ips, Mappings: []PortMapping{mapping("tcp", 80, 80, "")}}, "without a container ID"},
		"no address":    {PodPorts{ContainerID: "c1", Mappings: []PortMapping{mapping("tcp", 80, 80, "")}}, "has no address"},
		"port 0":        {PodPorts{ContainerID: "c1", IPs: ips, Mappings: []PortMapping{mapping("tcp", 0, 80, "")}}, "not a valid mapping"},
		"unknown proto": {PodPorts{ContainerID: "c1", IPs: ips, Mappings: []PortMapping{mapping("icmp", 80, 80, "")}}, "not a valid mapping"},
	}
	for name, c := range cases {
		if err := c.p.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.names) {
			t.Errorf("%s: Validate() = %v, want ErrInvalid with %q", name, err, c.names)
		}
	}
	ok := PodPorts{ContainerID: "c1", IPs: ips, Mappings: []PortMapping{mapping("tcp", 80, 8080, ""), mapping("udp", 80, 8080, ""), mapping("tcp", 80, 8080, "10.0.0.1")}}
	if err := ok.Validate(); err != nil {
		t.Errorf("one port per protocol and host address: %v", err)
	}
	rec, err := RecordHostPorts(ok)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseHostPortsRecord("c1", rec)
	if err != nil || !slices.Equal(back.Mappings, ok.Mappings) || !slices.Equal(back.IPs, ok.IPs) {
		t.Errorf("record %s read back as %+v, %v", rec, back, err)
	}
	if _, err := ParseHostPortsRecord("c1", `{"ips":["10.42.0.5/16"],"mappings":[{"hostPort":0,"containerPort":1,"protocol":"tcp"}]}`); !errors.Is(err, ErrInvalid) {
		t.Errorf("a damaged record: %v, want ErrInvalid", err)
	}
}

// hostPortRules is the table of a family as descriptions, nil when it does not exist.
func hostPortRules(t *testing.T, family nftables.TableFamily) []string {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	have, exists, err := tableDescriptions(conn, &nftables.Table{Name: hostPortTable, Family: family}, []string{"hostports", "prerouting", "output", "postrouting"})
	if err != nil {
		t.Fatal(err)
	}
	if !exists {
		return nil
	}
	if have == nil {
		return []string{"(table with other chains)"}
	}
	return have
}

// TestHostPortsTables drives HostPorts against the real nftables of a throwaway namespace:
// each pod's rules appear and go with it alone, a conflict or bad input changes nothing,
// what is right is not rewritten, and a deleted table is written again.
func TestHostPortsTables(t *testing.T) {
	needRoot(t)
	n := newNS(t)
	ctx := context.Background()
	inNS(t, n, func() error {
		h := NewHostPorts(nil)
		a := PodPorts{ContainerID: "aaa", IPs: []netip.Prefix{netip.MustParsePrefix("10.42.0.5/16"), netip.MustParsePrefix("fd00:42::5/64")},
			Mappings: []PortMapping{mapping("tcp", 18080, 8080, ""), mapping("udp", 5353, 53, "192.0.2.1")}}
		if err := h.Add(ctx, a); err != nil {
			t.Fatal(err)
		}
		want4 := []string{"chain hostports",
			"hostports: aaa tcp * port 18080 -> 10.42.0.5:8080", "hostports: aaa udp 192.0.2.1 port 5353 -> 10.42.0.5:53",
			"chain prerouting", "prerouting: local jump hostports", "chain output", "output: local jump hostports",
			"chain postrouting", "postrouting: aaa masquerade 10.42.0.0/16 -> 10.42.0.5", "postrouting: aaa masquerade 127.0.0.1 -> 10.42.0.5"}
		if got := hostPortRules(t, nftables.TableFamilyIPv4); !slices.Equal(got, want4) {
			t.Fatalf("ip table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want4, "\n"))
		}
		want6 := []string{"chain hostports", "hostports: aaa tcp * port 18080 -> [fd00:42::5]:8080",
			"chain prerouting", "prerouting: local jump hostports", "chain output", "output: local jump hostports",
			"chain postrouting", "postrouting: aaa masquerade fd00:42::/64 -> fd00:42::5"}
		if got := hostPortRules(t, nftables.TableFamilyIPv6); !slices.Equal(got, want6) {
			t.Fatalf("ip6 table (the IPv4 hostIP's mapping is not in it):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want6, "\n"))
		}

		// Another pod on the same host port: refused, nothing changes.
		b := PodPorts{ContainerID: "bbb", IPs: []netip.Prefix{netip.MustParsePrefix("10.42.0.6/16")}, Mappings: []PortMapping{mapping("tcp", 18080, 80, "")}}
		if err := h.Check(b); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "already mapped to container aaa") {
			t.Fatalf("Check of a taken host port: %v", err)
		}
		if err := h.Add(ctx, b); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "already mapped to container aaa") {
			t.Fatalf("Add of a taken host port: %v", err)
		}
		bad := PodPorts{ContainerID: "ccc", IPs: b.IPs, Mappings: []PortMapping{mapping("tcp", 1, 1, ""), mapping("tcp", 1, 2, "")}}
		if err := h.Add(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Add of a duplicate mapping: %v", err)
		}
		if got := hostPortRules(t, nftables.TableFamilyIPv4); !slices.Equal(got, want4) {
			t.Fatalf("refused adds changed the table:\n%s", strings.Join(got, "\n"))
		}

		b.Mappings = []PortMapping{mapping("tcp", 18081, 80, "")}
		if err := h.Add(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := h.Add(ctx, PodPorts{ContainerID: "none", IPs: b.IPs}); err != nil {
			t.Fatalf("a pod without host ports: %v", err)
		}
		if wrote, err := h.Ensure(ctx); wrote || err != nil {
			t.Fatalf("Ensure with nothing changed wrote %v, %v", wrote, err)
		}
		if wrote, err := NewHostPorts(nil).Restore(ctx, []PodPorts{b, a}); wrote || err != nil {
			t.Fatalf("a restart restoring the same records wrote %v, %v", wrote, err)
		}

		// DEL of a: only its rules go; the IPv6 table, now empty, goes too.
		if err := h.Delete(ctx, "aaa"); err != nil {
			t.Fatal(err)
		}
		if err := h.Delete(ctx, "aaa"); err != nil {
			t.Fatalf("a second DEL: %v", err)
		}
		got := strings.Join(hostPortRules(t, nftables.TableFamilyIPv4), "\n")
		if strings.Contains(got, "aaa") || !strings.Contains(got, "hostports: bbb tcp * port 18081 -> 10.42.0.6:80") {
			t.Fatalf("after DEL of aaa:\n%s", got)
		}
		if got := hostPortRules(t, nftables.TableFamilyIPv6); got != nil {
			t.Fatalf("ip6 table left without IPv6 mappings: %v", got)
		}

		// Drift: the table deleted by hand is written again, once.
		if err := DeleteTable("ip " + hostPortTable); err != nil {
			t.Fatal(err)
		}
		if wrote, err := h.Ensure(ctx); !wrote || err != nil {
			t.Fatalf("Ensure after the table was deleted wrote %v, %v", wrote, err)
		}
		if got := strings.Join(hostPortRules(t, nftables.TableFamilyIPv4), "\n"); !strings.Contains(got, "bbb tcp * port 18081") {
			t.Fatalf("repaired table:\n%s", got)
		}
		if wrote, err := h.Retain(ctx, map[string]bool{}); !wrote || err != nil {
			t.Fatalf("Retain of no pods wrote %v, %v", wrote, err)
		}
		if got := hostPortRules(t, nftables.TableFamilyIPv4); got != nil {
			t.Fatalf("table left without pods: %v", got)
		}
		return nil
	})
}
