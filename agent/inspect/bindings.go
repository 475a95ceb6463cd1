package inspect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// unbound returns the local pod ports (whose device is there) that ovn-controller has not
// bound: lost ones it bound once and released since (a pod whose ADD succeeded and that has
// no network now), and never ones it has not bound yet (an ADD in flight, or a logical port
// missing from the southbound database), each as "port (lsp)".
func unbound(ports []vswitch.Port, gone func(string) bool) (lost, never []string) {
	for _, p := range ports {
		if p.ExternalIDs[vswitch.KeyOVNInstalled] == "true" || gone(p.Name) {
			continue
		}
		s := p.Name + " (" + p.IfaceID + ")"
		if p.BindingLost() {
			lost = append(lost, s)
		} else {
			never = append(never, s)
		}
	}
	return lost, never
}

// checkPodBindings: every local pod port is bound by ovn-controller (ovn-installed).
func (h *Host) checkPodBindings(ctx context.Context) Result {
	ovs, err := h.OVS(ctx)
	if err != nil {
		return skip("no Open_vSwitch database")
	}
	ports, err := ovs.Ports(ctx, node.Bridge)
	if err != nil {
		return fail("check the Open_vSwitch database", "%v", err)
	}
	lost, never := unbound(ports, linkGone)
	var notUp []string
	sbNote := ", up on this chassis in the southbound"
	if b, err := h.chassisBindings(ctx, ovs); err != nil {
		sbNote = fmt.Sprintf("; southbound bindings not read: %v", err)
	} else {
		notUp = notUpHere(ports, linkGone, b)
	}
	if len(lost)+len(never)+len(notUp) == 0 {
		return pass("all %d pod ports on %s bound by ovn-controller (ovn-installed)%s", len(ports), node.Bridge, sbNote)
	}
	var parts []string
	if len(notUp) > 0 {
		parts = append(parts, fmt.Sprintf("ovn-installed but the southbound Port_Binding is not up on this chassis: %s", strings.Join(notUp, ", ")))
	}
	if len(lost) > 0 {
		parts = append(parts, fmt.Sprintf("released after ovn-installed: %s", strings.Join(lost, ", ")))
	}
	if len(never) > 0 {
		parts = append(parts, fmt.Sprintf("never bound: %s", strings.Join(never, ", ")))
	}
	return fail("edgeovn reclaims a released port within seconds (its log says \"lost its OVN binding\"); if one stays, restart the pod, "+
		"and check ovn-controller's log for the lsp (an ADD in flight shows as never bound for a moment)",
		"%d of %d pod ports have no OVN binding on this chassis: %s", len(lost)+len(never)+len(notUp), len(ports), strings.Join(parts, "; "))
}

// linkGone reports whether the kernel has no network device of that name.
func linkGone(name string) bool {
	_, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	return errors.As(err, &notFound)
}
