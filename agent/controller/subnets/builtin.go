package subnets

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam/netfamily"
)

// builtins are the Subnets the configuration defines, as Kube-OVN writes them: ovn-default on
// the cluster CIDR (the default, NAT for outgoing traffic, distributed gateway) and join on
// the join CIDR.
// Each is dual stack ("v4,v6", gateways in that order) when the configuration is.
func (s *Controller) builtins() []*kubeovn.Subnet {
	r := s.req
	joinGWs := joinGateways(r.JoinCIDRs)
	return []*kubeovn.Subnet{
		{ObjectMeta: metav1.ObjectMeta{Name: kubeovn.DefaultSubnet}, Spec: kubeovn.SubnetSpec{Default: true,
			Protocol: netfamily.Protocol(r.ClusterCIDRs), CIDRBlock: joined(masked(r.ClusterCIDRs)),
			Gateway: joined(r.ClusterGateways), ExcludeIps: strs(r.ClusterGateways),
			GatewayType: kubeovn.GatewayDistributed, NatOutgoing: true}},
		{ObjectMeta: metav1.ObjectMeta{Name: kubeovn.JoinSubnet}, Spec: kubeovn.SubnetSpec{
			Protocol: netfamily.Protocol(r.JoinCIDRs), CIDRBlock: joined(masked(r.JoinCIDRs)),
			Gateway: joined(joinGWs), ExcludeIps: strs(joinGWs)}},
	}
}

// joinGateways are the cluster router's join addresses: each join prefix's first address.
func joinGateways(cidrs []netip.Prefix) []netip.Addr {
	out := make([]netip.Addr, len(cidrs))
	for i, p := range cidrs {
		out[i] = p.Masked().Addr().Next()
	}
	return out
}

func masked(ps []netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = p.Masked()
	}
	return out
}

func strs[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// joined is Kube-OVN's comma form of a dual-stack field.
func joined[T fmt.Stringer](xs []T) string { return strings.Join(strs(xs), ",") }

func builtin(name string) bool { return name == kubeovn.DefaultSubnet || name == kubeovn.JoinSubnet }

// ensureObject creates the Subnet object when it is missing; one that exists is left as it is.
func (s *Controller) ensureObject(ctx context.Context, sn *kubeovn.Subnet) error {
	u, err := kubeovn.ToUnstructured(sn)
	if err != nil {
		return err
	}
	delete(u.Object, "status")
	_, err = s.dyn.Resource(kubeovn.SubnetResource).Create(ctx, u, metav1.CreateOptions{})
	if err == nil {
		s.log.Info("created subnet object from the configuration", "subnet", sn.Name, "cidr", sn.Spec.CIDRBlock)
		return nil
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return fmt.Errorf("create subnet %s: %w", sn.Name, err)
}
