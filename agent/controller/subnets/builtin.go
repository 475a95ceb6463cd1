package subnets

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// builtins are the Subnets the configuration defines, as Kube-OVN writes them: ovn-default on
// the cluster CIDR (the default, NAT for outgoing traffic, distributed gateway) and join on
// the join CIDR.
func (s *Controller) builtins() []*kubeovn.Subnet {
	r := s.req
	joinGW := r.JoinCIDR.Masked().Addr().Next()
	return []*kubeovn.Subnet{
		{ObjectMeta: metav1.ObjectMeta{Name: kubeovn.DefaultSubnet}, Spec: kubeovn.SubnetSpec{Default: true,
			Protocol: protocolOf(r.ClusterCIDR.Addr().Is4()), CIDRBlock: r.ClusterCIDR.Masked().String(),
			Gateway: r.ClusterGateway.String(), ExcludeIps: []string{r.ClusterGateway.String()},
			GatewayType: kubeovn.GatewayDistributed, NatOutgoing: true}},
		{ObjectMeta: metav1.ObjectMeta{Name: kubeovn.JoinSubnet}, Spec: kubeovn.SubnetSpec{
			Protocol: protocolOf(r.JoinCIDR.Addr().Is4()), CIDRBlock: r.JoinCIDR.Masked().String(),
			Gateway: joinGW.String(), ExcludeIps: []string{joinGW.String()}}},
	}
}

func protocolOf(v4 bool) string {
	if v4 {
		return kubeovn.ProtocolIPv4
	}
	return kubeovn.ProtocolIPv6
}

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
