package node

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// conflicts are the prefixes the host wiring left out: refused before wiring (a Subnet that
// overlaps this host's networks, the join network or a Service CIDR) or by hostnet (a route
// or address edgeovn does not own in the way). Held under hostState.mu.
type conflicts struct {
	refused []hostnet.RouteConflict // from hostSpec
	routes  []hostnet.RouteConflict // from the last Ensure
	said    string                  // what was last reported
}

func (c *conflicts) String() string {
	var parts []string
	for _, l := range [][]hostnet.RouteConflict{c.refused, c.routes} {
		for _, x := range l {
			parts = append(parts, x.String())
		}
	}
	return strings.Join(parts, "; ")
}

// report logs, counts and remembers the conflicts when they changed. Called under hostState.mu.
func (r *Role) reportConflicts(log *slog.Logger) {
	c := &r.host.conflicts
	now := c.String()
	if now == c.said {
		return
	}
	c.said = now
	r.req.Metrics.SetRouteConflicts(len(c.refused) + len(c.routes))
	if now == "" {
		log.Info("host wiring: no prefix left out any more")
		return
	}
	log.Warn("host wiring: prefixes not routed through "+HostInterface+", a network of this host edgeovn does not own is in the way (nothing of it was changed)",
		"conflicts", now)
}

// RouteConflicts is what the host wiring left out, as reported on the Node; empty: nothing.
func (r *Role) RouteConflicts() string {
	r.host.mu.Lock()
	defer r.host.mu.Unlock()
	return r.host.conflicts.said
}

// refuseOverlaps drops from pods (the subnets' prefixes to route and masquerade) those that
// overlap this host's own networks, the join network or, when edgeovn serves Services, a
// Service CIDR: the controller refuses such Subnets, this is the node's own guard (an older
// controller, a network the host got since).
func (r *Role) refuseOverlaps(pods []netip.Prefix, join []netip.Prefix, host []netip.Prefix) ([]netip.Prefix, []hostnet.RouteConflict) {
	reserved := subnetcheck.Prefixes("the join network", join...)
	reserved = append(reserved, subnetcheck.Prefixes("a network of this host", host...)...)
	if r.req.Services {
		reserved = append(reserved, subnetcheck.Prefixes("Service CIDR", r.req.ServiceCIDRs...)...)
	}
	var keep []netip.Prefix
	var refused []hostnet.RouteConflict
	for _, p := range pods {
		err := subnetcheck.Check([]netip.Prefix{p}, reserved)
		if c, ok := err.(*subnetcheck.Conflict); ok {
			refused = append(refused, hostnet.RouteConflict{Dst: p, Theirs: c.With.What + " " + c.With.Prefix.String()})
			continue
		}
		keep = append(keep, p)
	}
	return keep, refused
}

// publishHost writes this host's networks (annotation.HostNetworksKey, what the controller
// checks Subnets against) and the wiring's conflicts (annotation.RouteConflictsKey) on its
// Node when they differ from what the Node says.
func (r *Role) publishHost(ctx context.Context, kube *kubeapi.Client, node *corev1.Node, networks []netip.Prefix) error {
	want := map[string]*string{}
	if v := annotation.EncodeHostNetworks(networks); node.Annotations[annotation.HostNetworksKey] != v {
		want[annotation.HostNetworksKey] = &v
	}
	c, had := r.RouteConflicts(), node.Annotations[annotation.RouteConflictsKey]
	switch {
	case c == "" && had != "":
		want[annotation.RouteConflictsKey] = nil
	case c != "" && c != had:
		want[annotation.RouteConflictsKey] = &c
	}
	if len(want) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": want}})
	if err != nil {
		return fmt.Errorf("encode annotations of node %s: %w", node.Name, err)
	}
	if _, err := kube.Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotate node %s with its networks: %w", node.Name, err)
	}
	if v, ok := want[annotation.RouteConflictsKey]; ok && v != nil {
		return conflictEvent(ctx, kube, node, *v)
	}
	return nil
}

// ReasonRouteConflict is the Node Event's reason when the host wiring leaves prefixes out.
const ReasonRouteConflict = "RouteConflict"

// conflictEvent is a Warning Event on the Node saying what the wiring left out, once per
// change of it.
func conflictEvent(ctx context.Context, kube *kubeapi.Client, node *corev1.Node, msg string) error {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: node.Name + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID},
		Reason:         ReasonRouteConflict, Type: corev1.EventTypeWarning, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Message:             "not routed through " + HostInterface + ", a route or address of this host edgeovn does not own is in the way (left as it is): " + msg,
		Source:              corev1.EventSource{Component: "edgeovn-node", Host: node.Name},
		ReportingController: "edgeovn.io/node", ReportingInstance: node.Name,
	}
	if _, err := kube.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("event on node %s: %w", node.Name, err)
	}
	return nil
}
