package inspect

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
)

// hostRoutes says how many routes edgeovn holds on this host (proto 211) and which prefixes
// the node role left out for a route or address of the host it does not own, as it wrote on
// its Node (annotation.RouteConflictsKey); conflicts is empty when there are none.
func (h *Host) hostRoutes(ctx context.Context) (owned int, conflicts string, err error) {
	routes, err := hostnet.OwnedRoutes()
	if err != nil {
		return 0, "", err
	}
	kube, err := h.Kube()
	if err != nil {
		return len(routes), "", err
	}
	n, err := kube.Nodes().Get(ctx, h.Cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return len(routes), "", fmt.Errorf("get node %s: %w", h.Cfg.NodeName, err)
	}
	return len(routes), n.Annotations[annotation.RouteConflictsKey], nil
}

// checkHostRoutes fails while the node role leaves a prefix out because the host has a route
// or address in the way that edgeovn did not make (and so will not change).
func (h *Host) checkHostRoutes(ctx context.Context) Result {
	owned, conflicts, err := h.hostRoutes(ctx)
	switch {
	case err != nil:
		return skip("%v", err)
	case conflicts != "":
		return fail("the Subnet overlaps a network of this host edgeovn does not own: delete that Subnet and make it on another range, or remove the host's route if it is stale (edgeovn never changes it)",
			"not routed through %s: %s", "ovn0", conflicts)
	}
	return pass("%d route(s) of edgeovn's (proto %d), no prefix left out", owned, hostnet.RouteProtocol)
}

// hostRoutesLine is the status line of hostRoutes.
func (h *Host) hostRoutesLine(ctx context.Context) string {
	owned, conflicts, err := h.hostRoutes(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("%d of edgeovn's (proto %d); left out: unknown, %v", owned, hostnet.RouteProtocol, err)
	case conflicts != "":
		return fmt.Sprintf("%d of edgeovn's (proto %d); LEFT OUT, in the way: %s", owned, hostnet.RouteProtocol, conflicts)
	}
	return fmt.Sprintf("%d of edgeovn's (proto %d), none left out", owned, hostnet.RouteProtocol)
}
