package node

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// Kube-OVN's node labels of a provider network (util.ProviderNetwork*Template): its daemon
// writes ready, interface and mtu on a node where the bridge is up, exclude on a node the
// network does not apply to, and removes them all when the network is deleted.
const providerLabelDomain = ".provider-network.kubernetes.io/"

func providerLabel(provider, key string) string { return provider + providerLabelDomain + key }

// ownNode is this node's object, from an informer of it alone, started when the first
// ProviderNetwork appears (a host without underlay watches nothing more): its labels choose
// the provider networks with spec.nodeSelector, and a change of them is followed.
type ownNode struct {
	name   string
	kube   *kubeapi.Client // nil: no API client
	poke   func(any)
	lister corelisters.NodeLister // nil until started
}

// start starts the informer of this node, once, and waits for its first list; poke is called
// on each change.
func (n *ownNode) start(ctx context.Context) error {
	if n.lister != nil || n.kube == nil {
		return nil
	}
	factory := kubeapi.NewInformers(n.kube, kubeapi.InformerOptions{Tweak: func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", n.name).String()
	}})
	nodes := factory.Nodes()
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: n.poke, UpdateFunc: func(_, obj any) { n.poke(obj) }, DeleteFunc: n.poke,
	}); err != nil {
		return fmt.Errorf("watch node %s: %w", n.name, err)
	}
	factory.Start(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced) {
		return fmt.Errorf("watch node %s: %w", n.name, ctx.Err())
	}
	n.lister = nodes.Lister()
	return nil
}

// labels are the node's labels; false when the node cannot be read.
func (n ownNode) labels() (map[string]string, bool) {
	if n.lister == nil {
		return nil, false
	}
	obj, err := n.lister.Get(n.name)
	if err != nil {
		return nil, false
	}
	return obj.Labels, true
}

// anySelector says whether a provider network chooses its nodes by label.
func anySelector(objs []runtime.Object) bool {
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "nodeSelector"); found {
				return true
			}
		}
	}
	return false
}

// wantLabels is Kube-OVN's provider labels of this node: per provider network, ready,
// interface and mtu where it is ready, exclude=true where it does not apply, none where it is
// not ready; the labels of networks that are gone are removed (nil).
func wantLabels(objs []runtime.Object, have map[string]string, wanted map[string]wantedUplink, verdicts map[string]nodeVerdict) map[string]any {
	want := map[string]any{}
	for k := range have {
		if strings.Contains(k, providerLabelDomain) {
			want[k] = nil
		}
	}
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetDeletionTimestamp() != nil || kubeovn.ValidateProviderName(u.GetName()) != nil {
			continue
		}
		name := u.GetName()
		for _, k := range []string{"ready", "interface", "mtu", "exclude"} {
			want[providerLabel(name, k)] = nil
		}
		w, applies := wanted[name]
		v := verdicts[name]
		switch {
		case !applies:
			want[providerLabel(name, "exclude")] = "true"
		case v.ready:
			want[providerLabel(name, "ready")] = "true"
			want[providerLabel(name, "interface")] = w.nic
			want[providerLabel(name, "mtu")] = strconv.Itoa(v.mtu)
		}
	}
	// Only what differs from the node's labels goes into the patch.
	maps.DeleteFunc(want, func(k string, v any) bool {
		cur, ok := have[k]
		return v == nil && !ok || v != nil && ok && cur == v
	})
	return want
}

// label writes this node's provider labels when they differ from what it has.
func (u *underlay) label(ctx context.Context, objs []runtime.Object, have map[string]string, wanted map[string]wantedUplink, verdicts map[string]nodeVerdict) {
	if u.kube == nil || u.node.lister == nil {
		return
	}
	patch := wantLabels(objs, have, wanted, verdicts)
	if len(patch) == 0 {
		return
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": patch}})
	if err != nil {
		return
	}
	if _, err := u.kube.Nodes().Patch(ctx, u.r.req.NodeName, types.MergePatchType, body, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		u.r.log.Warn("write the node's provider network labels", "node", u.r.req.NodeName, "err", err)
	}
}
