package subnets

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// TestSubnetVpc: a Subnet's spec.vpc puts its switch on that Vpc's router; Subnets of
// different VPCs may share a CIDR (the IPAM keeps them apart by subnet), Subnets of one VPC
// may not; a Subnet naming a missing Vpc is refused naming spec.vpc, nothing of it applied.
func TestSubnetVpc(t *testing.T) {
	inVpc := func(vpc, cidr, gw string) kubeovn.SubnetSpec {
		return kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: cidr, Gateway: gw, Vpc: vpc}
	}
	vpcs := []*unstructured.Unstructured{ctltest.Vpc(t, "vpc-a", kubeovn.VpcSpec{}), ctltest.Vpc(t, "vpc-b", kubeovn.VpcSpec{})}
	clusterLRPs := []string{"lrp ovn-cluster ovn-cluster-join 100.64.0.1/16", "lrp ovn-cluster ovn-cluster-ovn-default 10.42.0.1/16"}
	tests := []struct {
		name    string
		before  world
		want    subnetAfter
		routers []string // RouterRows that must be there
		notLRP  []string // RouterRows that must not be there
	}{{
		name: "two VPCs with the same CIDR: both applied, each switch on its VPC's router",
		before: world{vpcs: vpcs, subnets: []*kubeovn.Subnet{ctltest.Subnet("a1", inVpc("vpc-a", "10.50.0.0/24", "10.50.0.1")),
			ctltest.Subnet("b1", inVpc("vpc-b", "10.50.0.0/24", "10.50.0.1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"a1": appliedConds, "b1": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch a1", "switch b1"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet a1 10.50.0.0/24", "subnet b1 10.50.0.0/24"),
		},
		routers: append([]string{"router vpc-a", "router vpc-b", "lrp vpc-a vpc-a-a1 10.50.0.1/24", "lrp vpc-b vpc-b-b1 10.50.0.1/24"}, clusterLRPs...),
		notLRP:  []string{"lrp ovn-cluster ovn-cluster-a1 10.50.0.1/24"},
	}, {
		name:   "a custom VPC's Subnet may share ovn-default's addresses",
		before: world{vpcs: vpcs, subnets: []*kubeovn.Subnet{ctltest.Subnet("a1", inVpc("vpc-a", "10.42.0.0/24", "10.42.0.1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"a1": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch a1"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet a1 10.42.0.0/24"),
		},
		routers: []string{"lrp vpc-a vpc-a-a1 10.42.0.1/24"},
	}, {
		name: "overlapping Subnets inside one VPC: the second is refused",
		before: world{vpcs: vpcs, subnets: []*kubeovn.Subnet{ctltest.Subnet("a1", inVpc("vpc-a", "10.50.0.0/24", "10.50.0.1")),
			ctltest.Subnet("a2", inVpc("vpc-a", "10.50.0.128/25", "10.50.0.129"))}},
		want: subnetAfter{
			conds:       map[string][]string{"a1": appliedConds, "a2": refusedConds("CIDROverlap")},
			switches:    []string{"switch join", "switch ovn-default", "switch a1"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet a1 10.50.0.0/24"),
			events:      []string{"Warning CIDROverlap a2: cidrBlock 10.50.0.128/25 overlaps subnet a1 (10.50.0.0/24) of vpc vpc-a"},
		},
	}, {
		name:   "a Subnet naming a missing Vpc is refused naming spec.vpc; no router is made",
		before: world{vpcs: vpcs, subnets: []*kubeovn.Subnet{ctltest.Subnet("x1", inVpc("nope", "10.50.0.0/24", "10.50.0.1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"x1": refusedConds(ReasonVpcNotFound)},
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			events:      []string{"Warning VpcNotFound x1: spec.vpc: vpc nope not found"},
		},
		notLRP: []string{"router nope"},
	}, {
		name: "spec.routeTable binds the Subnet's router port to that route table (options:route_table)",
		before: world{vpcs: vpcs, subnets: []*kubeovn.Subnet{ctltest.Subnet("a1", withTable(inVpc("vpc-a", "10.50.0.0/24", "10.50.0.1"), "rtb1")),
			ctltest.Subnet("a2", inVpc("vpc-a", "10.51.0.0/24", "10.51.0.1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"a1": appliedConds, "a2": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch a1", "switch a2"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet a1 10.50.0.0/24", "subnet a2 10.51.0.0/24"),
		},
		routers: []string{"lrp vpc-a vpc-a-a1 10.50.0.1/24 table=rtb1", "lrp vpc-a vpc-a-a2 10.51.0.1/24"},
	}, {
		name:   "a routeTable that is no table name is refused naming the field; nothing of the Subnet applied",
		before: world{vpcs: vpcs, subnets: []*kubeovn.Subnet{ctltest.Subnet("a1", withTable(inVpc("vpc-a", "10.50.0.0/24", "10.50.0.1"), "rtb/1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"a1": refusedConds(ReasonInvalidSpec)},
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			events:      []string{`Warning InvalidSpec a1: invalid subnet spec: routeTable: "rtb/1": only letters`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.before)
			r.check(tt.want)
			rows := r.nb.RouterRows(t)
			for _, w := range tt.routers {
				if !slices.Contains(rows, w) {
					t.Errorf("northbound lacks %q; routers:\n%v", w, rows)
				}
			}
			for _, w := range tt.notLRP {
				if slices.Contains(rows, w) {
					t.Errorf("northbound has %q", w)
				}
			}
		})
	}
}

func withTable(s kubeovn.SubnetSpec, table string) kubeovn.SubnetSpec {
	s.RouteTable = table
	return s
}

// TestNamespaceVpcDefaultSubnet: a namespace a Vpc lists gets the Vpc's defaultSubnet when no
// Subnet lists it.
func TestNamespaceVpcDefaultSubnet(t *testing.T) {
	r := newRig(t, world{
		vpcs: []*unstructured.Unstructured{ctltest.Vpc(t, "vpc-a", kubeovn.VpcSpec{Namespaces: []string{"default"}, DefaultSubnet: "a1"})},
		subnets: []*kubeovn.Subnet{ctltest.Subnet("a1", kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4,
			CIDRBlock: "10.50.0.0/24", Gateway: "10.50.0.1", Vpc: "vpc-a"})},
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
	got, err := r.s.PodSubnet(pod, "")
	if err != nil || got != "a1" {
		t.Fatalf("PodSubnet = %q, %v; want a1 (vpc-a's defaultSubnet)", got, err)
	}
}
