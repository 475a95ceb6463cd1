package subnets

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/netfamily"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Reasons in a Subnet's conditions and Events.
const (
	ReasonSubnetValid      = "ValidateLogicalSwitchSuccess"
	ReasonSubnetReady      = "LogicalSwitchReady"
	ReasonInvalidSpec      = "InvalidSpec"
	ReasonCIDRChange       = "CIDRChangeRefused"
	ReasonCIDROverlap      = "CIDROverlap"
	ReasonNotConfigured    = "DiffersFromConfiguration"
	ReasonFamilies         = "FamiliesDifferFromCluster"
	ReasonSubnetInUse      = "SubnetInUse"
	ReasonSubnetApplyError = "ApplyFailed"
)

// refusal is a Subnet edgeovn will not apply as it stands: reported in its status, not retried
// until it changes.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }

// sync brings one Subnet's IPAM subnet, switch, router port and policies to its spec, or
// reports why not, then writes its status.
func (s *Controller) sync(ctx context.Context, name string) error {
	obj, err := s.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return s.gone(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("get subnet %s: %w", name, err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	sn, err := kubeovn.FromUnstructured(u)
	if err != nil {
		return s.writeStatus(ctx, u, kubeovn.UnreadSubnet(u), &refusal{ReasonInvalidSpec, err})
	}
	if sn.DeletionTimestamp != nil {
		return s.deleting(ctx, u, sn)
	}
	if err := s.writer().SetFinalizer(ctx, u, true); err != nil {
		return err
	}
	net, ref := s.validate(sn)
	if ref != nil && builtin(sn.Name) {
		net, sn = s.configNetwork(sn), withSpecOf(sn, s.builtin(sn.Name)) // the configuration stays in force
		if err := s.apply(ctx, sn, net); err != nil {
			return err
		}
	}
	if ref == nil {
		if err := s.apply(ctx, sn, net); err != nil {
			var r *refusal
			if !errors.As(err, &r) {
				_ = s.writeStatus(ctx, u, sn, &refusal{ReasonSubnetApplyError, err})
				return err
			}
			ref = r
		}
	}
	return s.writeStatus(ctx, u, sn, ref)
}

// validate parses the Subnet's network and refuses a CIDR change, a built-in subnet that
// differs from the configuration, an overlap with a special range, a Service CIDR, a Node's
// address or a host's network (subnetcheck), and an overlap with another subnet (the one
// applied first keeps its CIDR).
func (s *Controller) validate(sn *kubeovn.Subnet) (kubeovn.Network, *refusal) {
	net, err := kubeovn.ParseNetwork(sn.Spec)
	if err != nil {
		return net, &refusal{ReasonInvalidSpec, err}
	}
	if _, ref := s.switchACLs(sn, net); ref != nil {
		return net, ref
	}
	if err := kubeovn.CheckMTU(sn.Spec, net.CIDRs); err != nil {
		return net, &refusal{ReasonInvalidSpec, err}
	}
	if err := kubeovn.CheckRouteTable(sn.Spec); err != nil {
		return net, &refusal{ReasonInvalidSpec, err}
	}
	if ref := s.checkGateway(sn); ref != nil {
		return net, ref
	}
	if prev := s.previousCIDRs(sn.Name); prev != nil && !slices.Equal(prev, net.CIDRs) {
		return net, &refusal{ReasonCIDRChange, fmt.Errorf("cidrBlock changed from %v to %v: refused, addresses already handed out would fall outside it (create another Subnet instead); %v stays in use", prev, net.CIDRs, prev)}
	}
	r := s.req
	if want := map[string][]netip.Prefix{kubeovn.DefaultSubnet: masked(r.ClusterCIDRs), kubeovn.JoinSubnet: masked(r.JoinCIDRs)}[sn.Name]; want != nil &&
		!slices.Equal(net.CIDRs, want) {
		return net, &refusal{ReasonNotConfigured, fmt.Errorf("cidrBlock %v differs from edgeovn's configuration (%v): the configuration stays in use", net.CIDRs, want)}
	}
	if err := s.checkFamilies(net); err != nil {
		return net, &refusal{ReasonFamilies, err}
	}
	if ref := s.checkVpc(sn); ref != nil {
		return net, ref
	}
	reserved := s.reserved
	if customVpc(sn.Spec) {
		reserved = s.underlayReserved // no host routes to a custom VPC: only Services and special ranges
	}
	if sn.Spec.Vlan != "" {
		if _, ref := s.vlanOf(sn); ref != nil {
			return net, ref
		}
		reserved = s.underlayReserved
	}
	if err := subnetcheck.Check(net.CIDRs, reserved()); err != nil {
		return net, &refusal{ReasonCIDRReserved, fmt.Errorf("%w: refused, the hosts would route it to the pods instead (a Subnet must not overlap the Services, the Nodes' addresses, the hosts' own networks or a special range)", err)}
	}
	others := map[string][]netip.Prefix{kubeovn.DefaultSubnet: masked(r.ClusterCIDRs), kubeovn.JoinSubnet: masked(r.JoinCIDRs)}
	for _, sn := range s.req.IPAM.Subnets() { // applied in an earlier term: they keep their CIDRs
		others[sn.Name] = sn.CIDRs
	}
	s.mu.RLock()
	for name, a := range s.applied {
		others[name] = a.net.CIDRs
	}
	s.mu.RUnlock()
	vpc := kubeovn.VpcOf(sn.Spec)
	for _, name := range sortedKeys(others) {
		if name == sn.Name || s.vpcOfSubnet(name) != vpc {
			continue // subnets of different VPCs may share addresses: the IPAM keeps them apart by subnet
		}
		if mine, theirs, ok := kubeovn.Overlaps(net.CIDRs, others[name]); ok {
			return net, &refusal{ReasonCIDROverlap, fmt.Errorf("cidrBlock %s overlaps subnet %s (%s) of vpc %s: refused, subnets of one router must not share addresses", mine, name, theirs, vpc)}
		}
	}
	return net, nil
}

// configNetwork is a built-in subnet's network from the configuration.
func (s *Controller) configNetwork(sn *kubeovn.Subnet) kubeovn.Network {
	r := s.req
	if sn.Name == kubeovn.JoinSubnet {
		return kubeovn.Network{CIDRs: masked(r.JoinCIDRs), Gateways: joinGateways(r.JoinCIDRs), Protocol: netfamily.Protocol(r.JoinCIDRs)}
	}
	return kubeovn.Network{CIDRs: masked(r.ClusterCIDRs), Gateways: r.ClusterGateways, Protocol: netfamily.Protocol(r.ClusterCIDRs)}
}

func (s *Controller) builtin(name string) *kubeovn.Subnet {
	for _, b := range s.builtins() {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// withSpecOf is sn (its metadata and status) with b's spec.
func withSpecOf(sn, b *kubeovn.Subnet) *kubeovn.Subnet {
	out := *sn
	out.Spec = b.Spec
	return &out
}

// previousCIDRs are the CIDRs the subnet was applied with, in this term or (from the IPAM
// database) an earlier one; nil for a new subnet.
func (s *Controller) previousCIDRs(name string) []netip.Prefix {
	if a, ok := s.get(name); ok {
		return a.net.CIDRs
	}
	for _, sn := range s.req.IPAM.Subnets() {
		if sn.Name == name && !builtin(name) {
			return sn.CIDRs
		}
	}
	return nil
}

// apply writes the subnet into the IPAM and northbound: its switch with the router port at
// the gateway, the router policies that keep traffic to it off the distributed gateway's
// reroutes, and the Services' load balancer group. join's rows come from the cluster topology.
func (s *Controller) apply(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network) error {
	prev, had := s.get(sn.Name)
	var u2o []netip.Addr
	var active string
	if sn.Name != kubeovn.JoinSubnet {
		ipamNet := net
		if u2oEnabled(sn.Spec) {
			var ref *refusal
			if u2o, ref = s.u2oAddresses(sn, net); ref != nil {
				return ref
			}
			ipamNet = withU2OExcluded(net, u2o)
		}
		err := s.req.IPAM.EnsureSubnet(ctx, ipam.Subnet{Name: sn.Name, CIDRs: net.CIDRs, Gateways: net.Gateways, Excludes: ipamNet.Excludes})
		if errors.Is(err, ipam.ErrConflict) || errors.Is(err, ipam.ErrInvalid) {
			return &refusal{ReasonInvalidSpec, err}
		}
		if err != nil {
			return fmt.Errorf("ensure ipam subnet %s: %w", sn.Name, err)
		}
		for _, a := range u2o { // a pod took it between the choice and its exclusion: choose again
			if o, held := s.req.IPAM.Owner(sn.Name, a); held {
				return fmt.Errorf("u2o address %s of subnet %s was taken by %s meanwhile: retried", a, sn.Name, o.Pod)
			}
		}
		if err := s.ensureSubnetRows(ctx, sn, net, u2o); err != nil {
			return err
		}
		if err := s.isolate(ctx, sn, net); err != nil {
			return err
		}
		if err := s.multicast(ctx, sn, net); err != nil {
			return err
		}
		if sn.Spec.Vlan == "" && !customVpc(sn.Spec) {
			var err error
			if active, err = s.gateway(ctx, sn, net); err != nil {
				return err
			}
		}
	}
	cur := appliedSubnet{net: net, spec: sn.Spec, created: sn.CreationTimestamp.Time, u2o: u2o, gateway: active}
	s.set(sn.Name, cur)
	if cur.routedUnderlay() || prev.routedUnderlay() {
		if err := s.syncCtInvMatch(ctx); err != nil {
			return err
		}
	}
	if !had {
		s.log.Info("subnet applied", "subnet", sn.Name, "cidr", fmt.Sprint(net.CIDRs), "gateway", fmt.Sprint(net.Gateways))
		s.req.EnqueueUnallocated()
	}
	if !had || !slices.Equal(prev.spec.Namespaces, sn.Spec.Namespaces) || prev.spec.Default != sn.Spec.Default ||
		!slices.Equal(prev.spec.ExcludeIps, sn.Spec.ExcludeIps) {
		s.enqueueNamespaces()
	}
	return nil
}

// ensureSubnetRows writes an overlay Subnet's rows, or an underlay one's (spec.vlan).
// u2o are the router's addresses on an underlay switch with u2oInterconnection (u2o.go).
func (s *Controller) ensureSubnetRows(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network, u2o []netip.Addr) error {
	if customVpc(sn.Spec) {
		if err := s.req.NB.EnsureVpcRouter(ctx, sn.Spec.Vpc); err != nil {
			return fmt.Errorf("ensure router of subnet %s: %w", sn.Name, err)
		}
	}
	if sn.Spec.Vlan == "" {
		return s.ensureRows(ctx, sn, s.routerOf(sn.Spec), net)
	}
	tag, ref := s.vlanOf(sn)
	if ref != nil {
		return ref
	}
	return s.ensureUnderlayRows(ctx, sn, net, tag, u2o)
}

func (s *Controller) ensureRows(ctx context.Context, sn *kubeovn.Subnet, router string, net kubeovn.Network) error {
	nb, name := s.req.NB, sn.Name
	spec := northbound.SubnetSpec{Name: name, Router: router, CIDR: net.CIDRs[0], Gateway: net.Gateways[0], RouteTable: sn.Spec.RouteTable}
	if len(net.CIDRs) == 2 {
		spec.DualCIDR, spec.DualGateway = net.CIDRs[1], net.Gateways[1]
	}
	if err := nb.EnsureSubnet(ctx, spec); err != nil {
		return fmt.Errorf("ensure subnet %s: %w", name, err)
	}
	for _, p := range net.CIDRs {
		if router != s.req.Router {
			break // a custom VPC's router has no distributed gateway reroutes to keep off
		}
		match := "ip4.dst == " + p.String()
		if p.Addr().Is6() {
			match = "ip6.dst == " + p.String()
		}
		if err := nb.EnsureRouterPolicy(ctx, northbound.RouterPolicySpec{Router: router, Priority: northbound.NodeRoutePriority,
			Match: match, Action: nbdb.LogicalRouterPolicyActionAllow, Owner: northbound.OwnerRef{Kind: ovn.KindSubnet, Name: name}}); err != nil {
			return fmt.Errorf("ensure router policy of subnet %s: %w", name, err)
		}
	}
	if s.req.Services {
		if err := nb.EnsureLoadBalancerGroup(ctx, northbound.LoadBalancerGroupSpec{Name: northbound.ClusterLoadBalancerGroup,
			Switches: []string{name}}); err != nil {
			return err
		}
	}
	return nil
}

// deleting holds a deleted Subnet while pods hold addresses in it, saying which in its status
// and an Event; once none does, its rows and IPAM subnet go and the finalizer is removed.
func (s *Controller) deleting(ctx context.Context, u *unstructured.Unstructured, sn *kubeovn.Subnet) error {
	if builtin(sn.Name) {
		s.log.Warn("subnet from the configuration deleted: its network stays, the object is made again", "subnet", sn.Name)
		return s.writer().SetFinalizer(ctx, u, false)
	}
	if a, ok := s.get(sn.Name); ok && !a.deleting {
		a.deleting = true
		s.set(sn.Name, a)
	}
	if held := s.holders(sn.Name); len(held) > 0 {
		err := errors.New(inUseMessage(held, s.livePod))
		return s.writeStatus(ctx, u, sn, &refusal{ReasonSubnetInUse, err})
	}
	if err := s.remove(ctx, sn.Name); err != nil {
		return err
	}
	return s.writer().SetFinalizer(ctx, u, false)
}

// gone handles a Subnet whose object no longer exists: a built-in one is made again, another
// one's rows are removed (when a finalizer was bypassed and pods still hold addresses, they
// are kept).
func (s *Controller) gone(ctx context.Context, name string) error {
	for _, b := range s.builtins() {
		if b.Name == name {
			return s.ensureObject(ctx, b)
		}
	}
	if held := s.holders(name); len(held) > 0 {
		s.log.Warn("subnet object gone while pods hold addresses in it: its network stays until they are deleted", "subnet", name, "pods", podnet.ListSome(held))
		return nil
	}
	return s.remove(ctx, name)
}

func (s *Controller) remove(ctx context.Context, name string) error {
	n, err := s.req.NB.DeleteOwned(ctx, northbound.OwnerRef{Kind: ovn.KindSubnet, Name: name})
	if err != nil {
		return err
	}
	if err := s.removeU2ORows(ctx, name); err != nil {
		return err
	}
	if err := s.req.IPAM.DeleteSubnet(ctx, name); err != nil {
		return fmt.Errorf("delete ipam subnet %s: %w", name, err)
	}
	a, had := s.get(name)
	s.forget(name)
	if a.routedUnderlay() {
		if err := s.syncCtInvMatch(ctx); err != nil {
			return err
		}
	}
	if had || n > 0 {
		s.log.Info("subnet removed", "subnet", name, "rows", n)
		s.enqueueNamespaces()
	}
	return nil
}

// RemoveGone removes the subnets the IPAM holds from an earlier term whose objects were
// deleted while no controller ran.
func (s *Controller) RemoveGone(ctx context.Context) error {
	for _, sn := range s.req.IPAM.Subnets() {
		if builtin(sn.Name) {
			continue
		}
		if _, err := s.lister.Get(sn.Name); apierrors.IsNotFound(err) {
			if err := s.gone(ctx, sn.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// holders lists the owners of addresses in the subnet.
func (s *Controller) holders(name string) []string {
	var out []string
	for _, a := range s.req.IPAM.Allocations() {
		if a.Subnet == name {
			out = append(out, a.Owner.Pod)
		}
	}
	return out
}

// livePod says whether the pod ns/name exists (an address held for a gone pod is kept for
// its StatefulSet).
func (s *Controller) livePod(key string) bool {
	ns, name, _ := strings.Cut(key, "/")
	_, err := s.req.Pods.Pods(ns).Get(name)
	return err == nil
}

// inUseMessage says why a deleted Subnet is held: the pods holding addresses in it, and apart
// from them the gone StatefulSet pods whose addresses are kept for their re-creation, with
// what releases each.
func inUseMessage(held []string, live func(string) bool) string {
	var pods, kept []string
	for _, h := range held {
		if live(h) {
			pods = append(pods, h)
		} else {
			kept = append(kept, h)
		}
	}
	var parts []string
	if len(pods) > 0 {
		parts = append(parts, fmt.Sprintf("%d pod(s) holding addresses in it: %s (delete them, or let them finish)", len(pods), podnet.ListSome(pods)))
	}
	if len(kept) > 0 {
		parts = append(parts, fmt.Sprintf("%d address(es) kept for deleted StatefulSet pods: %s (scale the StatefulSet down or delete it)", len(kept), podnet.ListSome(kept)))
	}
	return "deletion waits for " + strings.Join(parts, "; and for ")
}

func (s *Controller) event(u *unstructured.Unstructured, reason, msg string) {
	s.req.Events.Event(u, corev1.EventTypeWarning, reason, msg)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkFamilies refuses a Subnet with a family the cluster has not: the hosts have no join
// address of that family, so its pods could not leave their host.
func (s *Controller) checkFamilies(net kubeovn.Network) error {
	cluster := netfamily.Families(s.req.ClusterCIDRs)
	for _, p := range net.CIDRs {
		if fam := netfamily.Families([]netip.Prefix{p}); !strings.Contains(cluster, fam) {
			return fmt.Errorf("cidrBlock %s is %s but the cluster (--cluster-cidr %v) is %s only: refused, its pods could not leave their host", p, fam, s.req.ClusterCIDRs, cluster)
		}
	}
	return nil
}
