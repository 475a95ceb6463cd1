package subnets

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// Reasons of a custom-VPC Subnet's refusal.
const (
	ReasonVpcNotFound = "VpcNotFound"
	ReasonVpcChange   = "VpcChangeRefused"
)

// registerVpcs adds a handler to the term's Vpc informer (the vpcs feature's too; the factory
// runs it): a Vpc's creation (after a Subnet that names it), change (its namespaces and
// defaultSubnet choose pods' subnets) or deletion queues the Subnets that name it and the
// namespaces.
func (s *Controller) registerVpcs(f *kubeapi.Informers) (cache.InformerSynced, error) {
	gi := f.Dynamic(s.dyn, kubeovn.VpcResource)
	s.vpcs = gi.Lister()
	inf := gi.Informer()
	onVpc := func(obj any) {
		s.enqueueNaming("vpc", eventName(obj))
		s.enqueueNamespaces()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onVpc, UpdateFunc: func(_, obj any) { onVpc(obj) }, DeleteFunc: onVpc,
	}); err != nil {
		return nil, fmt.Errorf("watch vpcs: %w", err)
	}
	return inf.HasSynced, nil
}

// enqueueNaming queues the Subnets whose spec.<field> is value.
func (s *Controller) enqueueNaming(field, value string) {
	if value == "" || s.inf == nil {
		return
	}
	for _, obj := range s.inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if v, _, _ := unstructured.NestedString(u.Object, "spec", field); v == value {
				s.queue.Add(u.GetName())
			}
		}
	}
}

// customVpc says whether the Subnet is on a custom VPC's router.
func customVpc(spec kubeovn.SubnetSpec) bool { return kubeovn.VpcOf(spec) != kubeovn.DefaultVpc }

// routerOf is the router the Subnet's switch is on: its Vpc's, else the cluster router.
func (s *Controller) routerOf(spec kubeovn.SubnetSpec) string {
	if customVpc(spec) {
		return spec.Vpc
	}
	return s.req.Router
}

// checkVpc refuses a Subnet naming a Vpc that does not exist (spec.vpc), and a change of an
// applied Subnet's VPC (its pods' ports would move to another router under their addresses).
func (s *Controller) checkVpc(sn *kubeovn.Subnet) *refusal {
	if a, ok := s.get(sn.Name); ok && kubeovn.VpcOf(a.spec) != kubeovn.VpcOf(sn.Spec) {
		return &refusal{ReasonVpcChange, fmt.Errorf("spec.vpc changed from %s to %s: refused, create another Subnet instead; %s stays in use",
			kubeovn.VpcOf(a.spec), kubeovn.VpcOf(sn.Spec), kubeovn.VpcOf(a.spec))}
	}
	if !customVpc(sn.Spec) {
		return nil
	}
	if s.vpcs == nil {
		return &refusal{ReasonVpcNotFound, fmt.Errorf("spec.vpc %q: vpcs are not watched", sn.Spec.Vpc)}
	}
	obj, err := s.vpcs.Get(sn.Spec.Vpc)
	if apierrors.IsNotFound(err) {
		return &refusal{ReasonVpcNotFound, fmt.Errorf("spec.vpc: vpc %s not found: refused until it exists", sn.Spec.Vpc)}
	}
	if err != nil {
		return &refusal{ReasonVpcNotFound, fmt.Errorf("spec.vpc: get vpc %s: %w", sn.Spec.Vpc, err)}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GetDeletionTimestamp() != nil {
		return &refusal{ReasonVpcNotFound, fmt.Errorf("spec.vpc: vpc %s is being deleted", sn.Spec.Vpc)}
	}
	return nil
}

// vpcOfSubnet is the VPC of a subnet applied now or, for one the IPAM holds from an earlier
// term, of its object (DefaultVpc when neither says).
func (s *Controller) vpcOfSubnet(name string) string {
	if a, ok := s.get(name); ok {
		return kubeovn.VpcOf(a.spec)
	}
	if s.lister != nil {
		if obj, err := s.lister.Get(name); err == nil {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				v, _, _ := unstructured.NestedString(u.Object, "spec", "vpc")
				return kubeovn.VpcOf(kubeovn.SubnetSpec{Vpc: v})
			}
		}
	}
	return kubeovn.DefaultVpc
}

// namespaceVpcSubnet is the defaultSubnet of a Vpc whose spec.namespaces lists the namespace
// (the first Vpc by name), "" when none does.
func (s *Controller) namespaceVpcSubnet(ns string) string {
	if s.vpcs == nil {
		return ""
	}
	objs, err := s.vpcs.List(labels.Everything())
	if err != nil {
		return ""
	}
	var names []string
	bound := map[string]string{}
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetDeletionTimestamp() != nil {
			continue
		}
		v, err := kubeovn.VpcFrom(u)
		if err != nil || v.Spec.DefaultSubnet == "" || !slices.Contains(v.Spec.Namespaces, ns) {
			continue
		}
		names = append(names, v.Name)
		bound[v.Name] = v.Spec.DefaultSubnet
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return bound[names[0]]
}

// eventName is the name of an informer event's object (a deletion's last known state too),
// "" when it is not an object of the dynamic client.
func eventName(obj any) string {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.GetName()
	}
	return ""
}
