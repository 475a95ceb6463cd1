package subnets

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// ReasonVlanConflict refuses a Subnet whose Vlan has the id of an older Vlan on the same
// provider (Kube-OVN marks such a Vlan status.conflict and rejects its Subnets).
const ReasonVlanConflict = "VlanConflict"

// The underlay's statuses the controller writes, as Kube-OVN's controller does: a
// ProviderNetwork's status.vlans (the valid Vlans on it that conflict with none), a Vlan's
// status.subnets (the Subnets naming it) and status.conflict (another, older Vlan on the same
// provider has its id, one in use by an applied Subnet first; id 0 never conflicts). The nodes write the ProviderNetwork's per-node
// conditions and ready lists (agent/node); the two write different fields, the controller
// with a merge patch of its own fields only.

// registerProviderNetworks adds the ProviderNetwork informer: a new ProviderNetwork gets its
// status.vlans.
func (s *Controller) registerProviderNetworks() (cache.InformerSynced, error) {
	gi := kubeapi.DynamicInformer(s.dyn, kubeovn.ProviderNetworkResource)
	s.pns = gi.Lister()
	inf := gi.Informer()
	poke := func(any) { s.pokeVlanStatus() }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	}); err != nil {
		return nil, fmt.Errorf("watch provider networks: %w", err)
	}
	go inf.Run(s.stop)
	return inf.HasSynced, nil
}

func (s *Controller) pokeVlanStatus() {
	select {
	case s.vlanPoke <- struct{}{}:
	default:
	}
}

// runVlanStatus writes the underlay statuses after each change (at most every 200 ms).
func (s *Controller) runVlanStatus(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.vlanPoke:
		}
		if err := s.syncVlanStatus(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("write underlay status", "err", err)
			time.AfterFunc(5*time.Second, s.pokeVlanStatus)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// vlanInfo is one Vlan as the statuses need it.
type vlanInfo struct {
	name     string
	created  time.Time
	id       int
	provider string
	valid    bool
	inUse    bool // an applied Subnet names it
}

// vlanInfos lists the Vlans in the order a conflict is decided: those applied Subnets use
// first (what is wired stays), then oldest first, by name within a second.
func (s *Controller) vlanInfos() []vlanInfo {
	used := map[string]bool{}
	s.mu.RLock()
	for _, a := range s.applied {
		used[a.spec.Vlan] = true
	}
	s.mu.RUnlock()
	var out []vlanInfo
	objs, _ := s.vlans.List(labels.Everything())
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		vi := vlanInfo{name: u.GetName(), created: u.GetCreationTimestamp().Time, inUse: used[u.GetName()]}
		if v, err := kubeovn.VlanFrom(u); err == nil {
			if id, provider, err := v.Tag(); err == nil {
				vi.id, vi.provider, vi.valid = id, provider, true
			}
		}
		out = append(out, vi)
	}
	slices.SortFunc(out, func(a, b vlanInfo) int {
		if a.inUse != b.inUse {
			if a.inUse {
				return -1
			}
			return 1
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// conflictOf names the valid Vlan ahead of v (vlanInfos' order) with v's id on v's provider, or "".
func conflictOf(all []vlanInfo, v vlanInfo) string {
	if !v.valid || v.id == 0 {
		return ""
	}
	for _, o := range all {
		if o.name == v.name {
			return ""
		}
		if o.valid && o.provider == v.provider && o.id == v.id {
			return o.name
		}
	}
	return ""
}

// syncVlanStatus writes every Vlan's and ProviderNetwork's status fields that differ.
func (s *Controller) syncVlanStatus(ctx context.Context) error {
	if s.vlans == nil || s.pns == nil || s.inf == nil {
		return nil
	}
	all := s.vlanInfos()
	subnetsOf := map[string][]string{}
	for _, obj := range s.inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if v, _, _ := unstructured.NestedString(u.Object, "spec", "vlan"); v != "" {
				subnetsOf[v] = append(subnetsOf[v], u.GetName())
			}
		}
	}
	onProvider := map[string][]string{}
	for _, v := range all {
		subs := subnetsOf[v.name]
		slices.Sort(subs)
		conflict := conflictOf(all, v) != ""
		if err := s.patchStatus(ctx, kubeovn.VlanResource.Resource, v.name, map[string]any{"subnets": subs, "conflict": conflict}); err != nil {
			return err
		}
		if v.valid && !conflict {
			onProvider[v.provider] = append(onProvider[v.provider], v.name)
		}
	}
	objs, _ := s.pns.List(labels.Everything())
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			vlans := onProvider[u.GetName()]
			slices.Sort(vlans)
			if err := s.patchStatus(ctx, kubeovn.ProviderNetworkResource.Resource, u.GetName(), map[string]any{"vlans": vlans}); err != nil {
				return err
			}
		}
	}
	return nil
}

// patchStatus merge-patches the fields of an underlay object's status that differ from the
// informer's copy; nil and empty lists are the same (the field is removed).
func (s *Controller) patchStatus(ctx context.Context, resource, name string, want map[string]any) error {
	lister, gvr := s.vlans, kubeovn.VlanResource
	if resource == kubeovn.ProviderNetworkResource.Resource {
		lister, gvr = s.pns, kubeovn.ProviderNetworkResource
	}
	obj, err := lister.Get(name)
	if err != nil {
		return nil // gone meanwhile: its deletion pokes again
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	patch := map[string]any{}
	for k, v := range want {
		if l, ok := v.([]string); ok && len(l) == 0 {
			v = nil
		}
		if !sameJSON(st[k], v) {
			patch[k] = v
		}
	}
	if len(patch) == 0 {
		return nil
	}
	return kubeovn.Writer{Dynamic: s.dyn, Resource: gvr, Kind: gvr.Resource}.PatchStatus(ctx, name, patch)
}

// sameJSON compares a value read from an object with one to write, by their JSON (false and
// an absent field are the same).
func sameJSON(have, want any) bool {
	if want == false && have == nil {
		return true
	}
	a, _ := json.Marshal(have)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}
