package bgp

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// state reads the informers' caches into the announcement's input.
func (w *watch) state() State {
	s := State{ClusterIPs: w.req.AnnounceClusterIP}
	if w.subnets != nil {
		for _, obj := range w.subnets.GetStore().List() {
			if sn, ok := subnetOf(obj); ok {
				s.Subnets = append(s.Subnets, sn)
			}
		}
	}
	for _, p := range w.req.Pods.List() {
		if pod, ok := podOf(p); ok {
			s.Pods = append(s.Pods, pod)
		}
	}
	if w.services != nil {
		for _, obj := range w.services.GetStore().List() {
			if svc, ok := obj.(*corev1.Service); ok {
				s.Services = append(s.Services, serviceOf(svc))
			}
		}
	}
	return s
}

// subnetOf: a Subnet the controller has validated (or that stays Ready after a refused
// change), as the host wiring routes them; an underlay subnet is on the site's network
// already, and join is never announced.
func subnetOf(obj any) (Subnet, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetName() == "join" {
		return Subnet{}, false
	}
	sn, err := kubeovn.FromUnstructured(u)
	if err != nil || !sn.IsValidated() && !sn.IsReady() || sn.Spec.Vlan != "" {
		return Subnet{}, false
	}
	cidrs, err := kubeovn.CIDRs(sn.Spec)
	if err != nil {
		return Subnet{}, false
	}
	return Subnet{Name: sn.Name, CIDRs: cidrs, Policy: u.GetAnnotations()[Annotation]}, true
}

// podOf: a pod of this host with its network allocated, not host-networked, not finished
// and not being deleted (its route goes as soon as its deletion starts).
func podOf(p *corev1.Pod) (Pod, bool) {
	if p.Spec.HostNetwork || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return Pod{}, false
	}
	n, err := annotation.Decode(p.Annotations)
	if err != nil {
		return Pod{}, false
	}
	return Pod{Namespace: p.Namespace, Name: p.Name, Switch: n.Switch, IPs: n.IPs, Policy: p.Annotations[Annotation]}, true
}

func serviceOf(svc *corev1.Service) Service {
	out := Service{Namespace: svc.Namespace, Name: svc.Name, Policy: svc.Annotations[Annotation]}
	for _, s := range svc.Spec.ClusterIPs {
		if a, err := netip.ParseAddr(s); err == nil {
			out.ClusterIPs = append(out.ClusterIPs, a)
		}
	}
	return out
}

// objects finds the object each bad value names, for its Event.
func (w *watch) objects() func(BadValue) runtime.Object {
	return func(b BadValue) runtime.Object {
		if b.Kind == "Pod" {
			if p, ok := w.req.Pods.Pod(b.Namespace, b.Name); ok {
				return p
			}
			return nil
		}
		inf, key := w.services, b.Namespace+"/"+b.Name
		if b.Kind == "Subnet" {
			inf, key = w.subnets, b.Name
		}
		if inf == nil {
			return nil
		}
		obj, ok, err := inf.GetStore().GetByKey(key)
		if err != nil || !ok {
			return nil
		}
		ro, _ := obj.(runtime.Object)
		return ro
	}
}
