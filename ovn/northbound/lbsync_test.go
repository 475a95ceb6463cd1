package northbound

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func webLB(proto nbdb.LoadBalancerProtocol, backends ...string) LoadBalancerSpec {
	var bs []netip.AddrPort
	for _, b := range backends {
		bs = append(bs, netip.MustParseAddrPort(b))
	}
	return LoadBalancerSpec{Name: "svc:default/web:" + string(proto), Protocol: proto,
		VIPs:    map[netip.AddrPort][]netip.AddrPort{netip.MustParseAddrPort("10.43.0.5:80"): bs},
		Options: map[string]string{"reject": "true"}, Owner: OwnerRef{Kind: ovn.KindService, Name: "default/web"}}
}

func TestSyncLoadBalancers(t *testing.T) {
	f := newFixture(t)
	sub := ensureClusterAndSubnet(t, f)
	group := LoadBalancerGroupSpec{Name: ClusterLoadBalancerGroup, Switches: []string{sub.Name, "join"}}
	f.mustWrite(t, 1, "group", func() error { return f.c.EnsureLoadBalancerGroup(f.ctx, group) })
	f.mustWrite(t, 0, "group again", func() error { return f.c.EnsureLoadBalancerGroup(f.ctx, group) })
	for _, sw := range []string{sub.Name, "join"} {
		if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=load_balancer_group", "list", "Logical_Switch", sw); strings.TrimSpace(out) == "" {
			t.Fatalf("switch %s has no load balancer group", sw)
		}
	}
	owner := OwnerRef{Kind: ovn.KindService, Name: "default/web"}
	sync := func(want ...LoadBalancerSpec) func() error {
		return func() error {
			_, err := f.c.SyncLoadBalancers(f.ctx, OwnedLoadBalancers{Owner: owner, Group: ClusterLoadBalancerGroup, Want: want})
			return err
		}
	}
	tcp, udp := webLB("tcp", "10.42.0.5:8080"), webLB("udp")
	f.mustWrite(t, 1, "create", sync(tcp, udp))
	f.mustWrite(t, 0, "same again", sync(tcp, udp))
	if out := f.srv.Run(t, "ovn-nbctl", "lb-list"); !strings.Contains(out, "10.42.0.5:8080") {
		t.Fatalf("lb-list:\n%s", out)
	}
	members := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=load_balancer", "list", "Load_Balancer_Group")
	if n := len(strings.Fields(members)); n != 2 {
		t.Fatalf("group holds %d load balancers, want 2: %q", n, members)
	}

	tcp = webLB("tcp", "10.42.0.5:8080", "10.42.0.6:8080")
	f.mustWrite(t, 1, "endpoint added, udp gone", sync(tcp))
	out := f.srv.Run(t, "ovn-nbctl", "lb-list")
	if !strings.Contains(out, "10.42.0.6:8080") || strings.Contains(out, ":udp") {
		t.Fatalf("after update, lb-list:\n%s", out)
	}

	// A row of the same name that edgeovn does not own is never taken over.
	f.insertForeign(t, f.create(t, &nbdb.LoadBalancer{UUID: "new_foreign", Name: "svc:default/other:tcp",
		Protocol: new(nbdb.LoadBalancerProtocolTCP), Vips: map[string]string{"10.43.0.9:80": ""}}))
	f.waitCache(t, "the foreign load balancer", func() bool { lb, _ := f.c.loadBalancerByName(f.ctx, "svc:default/other:tcp"); return lb != nil })
	other := webLB("tcp")
	other.Name, other.Owner = "svc:default/other:tcp", OwnerRef{Kind: ovn.KindService, Name: "default/other"}
	_, err := f.c.SyncLoadBalancers(f.ctx, OwnedLoadBalancers{Owner: other.Owner, Group: ClusterLoadBalancerGroup, Want: []LoadBalancerSpec{other}})
	if !errors.Is(err, ovn.ErrNotOwned) {
		t.Fatalf("sync over a foreign row = %v, want ErrNotOwned", err)
	}
	owners, err := f.c.LoadBalancerOwners(f.ctx, ovn.KindService)
	if err != nil || len(owners) != 1 || !owners["default/web"] {
		t.Fatalf("owners = %v, %v; want only default/web", owners, err)
	}

	f.mustWrite(t, 1, "service gone", sync())
	out = f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Load_Balancer")
	if strings.Contains(out, "svc:default/web") || !strings.Contains(out, "svc:default/other") {
		t.Fatalf("after delete, lb-list:\n%s", out)
	}
	f.mustWrite(t, 0, "gone again", sync())
}

func TestSyncLoadBalancersBadInputWritesNothing(t *testing.T) {
	f := newFixture(t)
	sub := ensureClusterAndSubnet(t, f)
	f.mustWrite(t, 1, "group", func() error {
		return f.c.EnsureLoadBalancerGroup(f.ctx, LoadBalancerGroupSpec{Name: ClusterLoadBalancerGroup, Switches: []string{sub.Name}})
	})
	good := webLB("tcp", "10.42.0.5:8080")
	owner := good.Owner
	f.mustWrite(t, 1, "create", func() error {
		_, err := f.c.SyncLoadBalancers(f.ctx, OwnedLoadBalancers{Owner: owner, Group: ClusterLoadBalancerGroup, Want: []LoadBalancerSpec{good}})
		return err
	})
	bad := webLB("tcp", "[fd00::5]:8080") // backend of the other family
	for name, req := range map[string]OwnedLoadBalancers{
		"backend of the other family": {Owner: owner, Group: ClusterLoadBalancerGroup, Want: []LoadBalancerSpec{bad}},
		"no such group":               {Owner: owner, Group: "nope", Want: []LoadBalancerSpec{good}},
		"spec of another owner":       {Owner: OwnerRef{Kind: ovn.KindService, Name: "default/x"}, Group: ClusterLoadBalancerGroup, Want: []LoadBalancerSpec{good}},
	} {
		before := f.c.writes.Load()
		if _, err := f.c.SyncLoadBalancers(f.ctx, req); err == nil || !strings.Contains(err.Error(), "default/") {
			t.Errorf("%s: err = %v, want an error naming the service", name, err)
		}
		if f.c.writes.Load() != before {
			t.Errorf("%s: wrote a transaction", name)
		}
	}
	if out := f.srv.Run(t, "ovn-nbctl", "lb-list"); !strings.Contains(out, "10.42.0.5:8080") {
		t.Fatalf("the good load balancer is gone after bad input:\n%s", out)
	}
}
