package vpcs

import (
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

var (
	readyConds = []string{"Error=False NoError", "Ready=True VpcReady", "Validated=True VpcReady"}
	// goodSpec routes everything through a gateway pod's address and drops one destination.
	goodSpec = kubeovn.VpcSpec{
		StaticRoutes: []kubeovn.StaticRoute{{CIDR: "0.0.0.0/0", NextHopIP: "10.50.0.254", Policy: kubeovn.PolicyDst}},
		PolicyRoutes: []kubeovn.PolicyRoute{{Priority: 31000, Match: "ip4.dst == 10.60.0.0/24", Action: kubeovn.ActionDrop}},
	}
	goodRows = []string{"router vpc-a", "route vpc-a 0.0.0.0/0 10.50.0.254 dst-ip", "rpolicy vpc-a 31000 ip4.dst == 10.60.0.0/24 drop"}
)

func refused(reason string) []string {
	return []string{"Error=True " + reason, "Ready=False " + reason, "Validated=False " + reason}
}

// TestVpcValidateApply: {Vpcs, Subnets, a change} -> {the custom routers' rows, the Vpc's
// conditions, Events}. A refused spec names its field in a condition and one Event and leaves
// what was applied before, and every other Vpc, as it was.
func TestVpcValidateApply(t *testing.T) {
	subnets := []*kubeovn.Subnet{validated("a1", "vpc-a", "10.50.0.0/24"), validated("b1", "vpc-b", "10.50.0.0/24")}
	tests := []struct {
		name   string
		spec   kubeovn.VpcSpec
		change func(*kubeovn.VpcSpec) // applied after the first sync, nil: none
		rows   []string
		conds  []string
		events []string
	}{{
		name: "static route and policy route on the Vpc's own router",
		spec: goodSpec, rows: goodRows, conds: readyConds,
	}, {
		name: "a policySrc reroute next hop inside the VPC",
		spec: kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{{CIDR: "10.50.0.0/25", NextHopIP: "10.50.0.200", Policy: kubeovn.PolicySrc}},
			PolicyRoutes: []kubeovn.PolicyRoute{{Priority: 100, Match: "ip4.src == 10.50.0.10", Action: kubeovn.ActionReroute, NextHopIP: "10.50.0.200"}}},
		rows:  []string{"router vpc-a", "route vpc-a 10.50.0.0/25 10.50.0.200 src-ip", "rpolicy vpc-a 100 ip4.src == 10.50.0.10 reroute 10.50.0.200"},
		conds: readyConds,
	}, {
		name:   "a static route's next hop outside every subnet of the VPC is refused naming the field",
		spec:   kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{{CIDR: "0.0.0.0/0", NextHopIP: "10.99.0.1"}}},
		rows:   []string{"router vpc-a"},
		conds:  refused(ReasonNextHop),
		events: []string{"Warning NextHopOutsideVpc vpc-a: staticRoutes[0].nextHopIP 10.99.0.1 is outside every subnet of vpc vpc-a"},
	}, {
		name:   "a match OVN would reject is refused before anything is written",
		spec:   kubeovn.VpcSpec{PolicyRoutes: []kubeovn.PolicyRoute{{Priority: 1, Match: "ip4.dst = 10.60.0.1", Action: kubeovn.ActionDrop}}},
		rows:   []string{"router vpc-a"},
		conds:  refused(ReasonBadMatch),
		events: []string{`Warning InvalidMatch vpc-a: policyRoutes[0].match: invalid OVN match "ip4.dst = 10.60.0.1"`},
	}, {
		name:   "a bad match in a change leaves the routes applied before",
		spec:   goodSpec,
		change: func(s *kubeovn.VpcSpec) { s.PolicyRoutes[0].Match = "ip4.dst == 10.60.0.0/24 &&" },
		rows:   goodRows,
		conds:  refused(ReasonBadMatch),
		events: []string{"Warning InvalidMatch vpc-a: policyRoutes[0].match"},
	}, {
		name:   "a route removed from the spec leaves the router",
		spec:   goodSpec,
		change: func(s *kubeovn.VpcSpec) { s.StaticRoutes = nil },
		rows:   []string{"router vpc-a", "rpolicy vpc-a 31000 ip4.dst == 10.60.0.0/24 drop"},
		conds:  readyConds,
	}, {
		name: "a peering with vpc-b: a port at localConnectIP peered with vpc-b's, a route through it",
		spec: kubeovn.VpcSpec{VpcPeerings: []kubeovn.VpcPeering{{RemoteVpc: "vpc-b", LocalConnectIP: "169.254.0.1/30"}},
			StaticRoutes: []kubeovn.StaticRoute{{CIDR: "10.70.0.0/24", NextHopIP: "169.254.0.2"}}},
		rows:  []string{"router vpc-a", "lrp vpc-a vpc-a-vpc-b 169.254.0.1/30", "route vpc-a 10.70.0.0/24 169.254.0.2 dst-ip"},
		conds: readyConds,
	}, {
		name:   "a removed peering takes its port",
		spec:   kubeovn.VpcSpec{VpcPeerings: []kubeovn.VpcPeering{{RemoteVpc: "vpc-b", LocalConnectIP: "169.254.0.1/30"}}},
		change: func(s *kubeovn.VpcSpec) { s.VpcPeerings = nil },
		rows:   []string{"router vpc-a"},
		conds:  readyConds,
	}, {
		name:   "a peering with a missing Vpc is refused naming the field",
		spec:   kubeovn.VpcSpec{VpcPeerings: []kubeovn.VpcPeering{{RemoteVpc: "nope", LocalConnectIP: "169.254.0.1/30"}}},
		rows:   []string{"router vpc-a"},
		conds:  refused(ReasonPeerNotFound),
		events: []string{"Warning VpcPeerNotFound vpc-a: vpcPeerings[0].remoteVpc: vpc nope not found"},
	}, {
		name: "routes of one cidr with different next hops are an ECMP group, one row each",
		spec: kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{ecmp("0.0.0.0/0", "10.50.0.254", "ecmp", ""), ecmp("0.0.0.0/0", "10.50.0.253", "ecmp", "")}},
		rows: []string{"router vpc-a", "route vpc-a 0.0.0.0/0 10.50.0.254 dst-ip", "route vpc-a 0.0.0.0/0 10.50.0.253 dst-ip"}, conds: readyConds,
	}, {
		name: "ecmp_symmetric_reply sets the routes' option",
		spec: kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{ecmp("0.0.0.0/0", "10.50.0.254", "ecmp_symmetric_reply", ""), ecmp("0.0.0.0/0", "10.50.0.253", "ecmp_symmetric_reply", "")}},
		rows: []string{"router vpc-a", "route vpc-a 0.0.0.0/0 10.50.0.254 dst-ip ecmp_symmetric_reply=true", "route vpc-a 0.0.0.0/0 10.50.0.253 dst-ip ecmp_symmetric_reply=true"}, conds: readyConds,
	}, {
		name: "a group turned from ecmp to ecmp_symmetric_reply and one next hop removed: repaired in place, the other row gone",
		spec: kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{ecmp("0.0.0.0/0", "10.50.0.254", "ecmp", ""), ecmp("0.0.0.0/0", "10.50.0.253", "ecmp", "")}},
		change: func(s *kubeovn.VpcSpec) {
			s.StaticRoutes = s.StaticRoutes[1:]
			s.StaticRoutes[0].ECMPMode = "ecmp_symmetric_reply"
		},
		rows: []string{"router vpc-a", "route vpc-a 0.0.0.0/0 10.50.0.253 dst-ip ecmp_symmetric_reply=true"}, conds: readyConds,
	}, {
		name: "routeTable: the same cidr in the main table and in rtb1 are two routes",
		spec: kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{ecmp("0.0.0.0/0", "10.50.0.254", "", ""), ecmp("0.0.0.0/0", "10.50.0.254", "", "rtb1")}},
		rows: []string{"router vpc-a", "route vpc-a 0.0.0.0/0 10.50.0.254 dst-ip", "route vpc-a 0.0.0.0/0 10.50.0.254 dst-ip table=rtb1"}, conds: readyConds,
	}, {
		name:   "an ecmpMode Kube-OVN does not know is refused naming the field, the routes before stay",
		spec:   goodSpec,
		change: func(s *kubeovn.VpcSpec) { s.StaticRoutes[0].ECMPMode = "weighted" },
		rows:   goodRows,
		conds:  refused(ReasonInvalidSpec),
		events: []string{`Warning InvalidSpec vpc-a: invalid vpc spec: staticRoutes[0].ecmpMode "weighted": want ecmp or ecmp_symmetric_reply`},
	}, {
		name:   "a routeTable that is no table name is refused naming the field",
		spec:   kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{ecmp("0.0.0.0/0", "10.50.0.254", "", "rtb 1")}},
		rows:   []string{"router vpc-a"},
		conds:  refused(ReasonInvalidSpec),
		events: []string{`Warning InvalidSpec vpc-a: invalid vpc spec: staticRoutes[0].routeTable: "rtb 1": only letters`},
	}, {
		name: "a group mixing ecmp and ecmp_symmetric_reply is refused naming the second route's ecmpMode",
		spec: goodSpec,
		change: func(s *kubeovn.VpcSpec) {
			s.StaticRoutes = append(s.StaticRoutes, ecmp("0.0.0.0/0", "10.50.0.253", "ecmp_symmetric_reply", ""))
		},
		rows:   goodRows,
		conds:  refused(ReasonInvalidSpec),
		events: []string{`Warning InvalidSpec vpc-a: invalid vpc spec: staticRoutes[1].ecmpMode "ecmp_symmetric_reply" differs from staticRoutes[0]'s`},
	}, {
		name:   "the same next hop twice in a group is refused naming the field",
		spec:   kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{ecmp("0.0.0.0/0", "10.50.0.254", "ecmp", ""), ecmp("0.0.0.0/0", "10.50.0.254", "ecmp", "")}},
		rows:   []string{"router vpc-a"},
		conds:  refused(ReasonInvalidSpec),
		events: []string{"Warning InvalidSpec vpc-a: invalid vpc spec: staticRoutes[1].nextHopIP 10.50.0.254: staticRoutes[0] has the same cidr"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// vpc-b's route is there before and must stay whatever vpc-a does.
			vpcB := ctltest.Vpc(t, "vpc-b", kubeovn.VpcSpec{StaticRoutes: []kubeovn.StaticRoute{{CIDR: "0.0.0.0/0", NextHopIP: "10.50.0.253"}}})
			r := newRig(t, subnets, ctltest.Vpc(t, "vpc-a", tt.spec), vpcB)
			// The Subnets feature makes vpc-a's router when its Subnet is applied.
			if err := r.nb.Client.EnsureVpcRouter(r.ctx, "vpc-a"); err != nil {
				t.Fatal(err)
			}
			if tt.change != nil {
				r.update("vpc-a", tt.change)
			}
			want := append(slices.Clone(tt.rows), "router vpc-b", "route vpc-b 0.0.0.0/0 10.50.0.253 dst-ip")
			if d := ctltest.Diff(r.vpcRows(), want); d != "" {
				t.Errorf("custom routers:%s", d)
			}
			v, conds := r.vpc("vpc-a")
			if d := ctltest.Diff(conds, tt.conds); d != "" {
				t.Errorf("vpc-a conditions:%s", d)
			}
			if !slices.Equal(v.Finalizers, []string{VpcFinalizer}) || v.Status.Router != "vpc-a" || !slices.Equal(v.Status.Subnets, []string{"a1"}) || !v.Status.Standby {
				t.Errorf("vpc-a finalizers %v, status %+v", v.Finalizers, v.Status)
			}
			r.rec.Check(t, tt.events)
		})
	}
}

// TestVpcRestartWritesNothing: a new term over the same Vpcs writes no northbound row and no
// status.
func TestVpcRestartWritesNothing(t *testing.T) {
	r := newRig(t, []*kubeovn.Subnet{validated("a1", "vpc-a", "10.50.0.0/24")}, ctltest.Vpc(t, "vpc-a", goodSpec))
	before := r.nb.Client.Stats().Transactions
	actions := len(r.dyn.Actions())
	r.start()
	if n := r.nb.Client.Stats().Transactions - before; n != 0 {
		t.Errorf("restart wrote %d northbound transactions, want 0", n)
	}
	for _, a := range r.dyn.Actions()[actions:] {
		if v := a.GetVerb(); v != "list" && v != "watch" && v != "get" {
			t.Errorf("restart wrote to the API: %s %s", v, a.GetResource().Resource)
		}
	}
	if d := ctltest.Diff(r.vpcRows(), goodRows); d != "" {
		t.Errorf("custom routers:%s", d)
	}
}

// TestVpcDelete: a deleted Vpc is held while a Subnet names it; once none does, its router,
// routes and policies go and the finalizer is removed; another Vpc's rows stay.
func TestVpcDelete(t *testing.T) {
	r := newRig(t, []*kubeovn.Subnet{validated("a1", "vpc-a", "10.50.0.0/24")}, ctltest.Vpc(t, "vpc-a", goodSpec),
		ctltest.Vpc(t, "vpc-b", kubeovn.VpcSpec{}))
	r.remove("vpc-a")
	if _, conds := r.vpc("vpc-a"); !slices.Contains(conds, "Ready=False VpcInUse") {
		t.Errorf("vpc-a conditions %v, want Ready=False VpcInUse", conds)
	}
	if d := ctltest.Diff(r.vpcRows(), append(slices.Clone(goodRows), "router vpc-b")); d != "" {
		t.Errorf("custom routers while held:%s", d)
	}
	if err := r.dyn.Resource(kubeovn.SubnetResource).Delete(r.ctx, "a1", metavOpts); err != nil {
		t.Fatal(err)
	}
	waitGone(t, r, "a1")
	if err := r.c.sync(r.ctx, "vpc-a"); err != nil {
		t.Fatal(err)
	}
	if d := ctltest.Diff(r.vpcRows(), []string{"router vpc-b"}); d != "" {
		t.Errorf("custom routers after delete:%s", d)
	}
	if v, _ := r.vpc("vpc-a"); len(v.Finalizers) != 0 {
		t.Errorf("vpc-a finalizers %v, want none", v.Finalizers)
	}
}

func ecmp(cidr, hop, mode, table string) kubeovn.StaticRoute {
	return kubeovn.StaticRoute{CIDR: cidr, NextHopIP: hop, ECMPMode: mode, RouteTable: table}
}
