package inspect

import (
	"context"
	"fmt"

	"github.com/edgeovn/edgeovn/ovn/southbound"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// notUpHere returns the local pod ports (whose device is there) that have ovn-installed but
// whose southbound Port_Binding is not up on this chassis (released, rebound elsewhere, or
// claimed with flows not installed), each as "port (lsp)": ovn-controller can leave
// ovn-installed="true" on a port it released (issue 29), so the local database alone passes
// a pod that has no network.
func notUpHere(ports []vswitch.Port, gone func(string) bool, b southbound.Bindings) []string {
	var out []string
	for _, p := range ports {
		if p.ExternalIDs[vswitch.KeyOVNInstalled] != "true" || gone(p.Name) || b.UpHere(p.IfaceID) {
			continue
		}
		out = append(out, p.Name+" ("+p.IfaceID+")")
	}
	return out
}

// chassisBindings reads the Port_Bindings on this host's chassis (the Open_vSwitch row's
// system-id).
func (h *Host) chassisBindings(ctx context.Context, ovs *vswitch.Client) (southbound.Bindings, error) {
	cfg, err := ovs.OVNConfig(ctx)
	if err != nil {
		return southbound.Bindings{}, err
	}
	name := cfg[vswitch.KeySystemID]
	if name == "" {
		return southbound.Bindings{}, fmt.Errorf("no external_ids:%s on the Open_vSwitch row", vswitch.KeySystemID)
	}
	sb, err := h.SB(ctx)
	if err != nil {
		return southbound.Bindings{}, fmt.Errorf("southbound not reachable at %v: %w", h.Cfg.SBEndpoints, err)
	}
	return sb.BindingsOn(ctx, name)
}
