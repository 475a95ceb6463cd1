package annotation

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// OVNProvider is the provider of a pod's primary interface: its annotations are
// "ovn.kubernetes.io/...".
const OVNProvider = "ovn"

// Keys are the annotation keys of one provider: Kube-OVN's "<provider>.kubernetes.io/<name>".
// The primary interface's provider is "ovn"; an attachment's is "<nad>.<namespace>.ovn".
type Keys struct {
	IPAddress, MACAddress, CIDR, Gateway, LogicalSwitch, Allocated, Routed, IPPool string
	// Routes is a JSON list of {"dst", "gw"} the node installs on the interface; DefaultRoute
	// ("true"/"false") says whether the interface carries the pod's default route (unset:
	// only the primary interface does).
	Routes, DefaultRoute string
}

var ovnKeys = KeysFor(OVNProvider)

// KeysFor returns the keys of provider; "" is the primary's ("ovn").
func KeysFor(provider string) Keys {
	if provider == "" {
		provider = OVNProvider
	}
	p := provider + ".kubernetes.io/"
	return Keys{IPAddress: p + "ip_address", MACAddress: p + "mac_address", CIDR: p + "cidr", Gateway: p + "gateway",
		LogicalSwitch: p + "logical_switch", Allocated: p + "allocated", Routed: p + "routed", IPPool: p + "ip_pool",
		Routes: p + "routes", DefaultRoute: p + "default_route"}
}

// IsPrimary says whether provider names the pod's primary interface.
func IsPrimary(provider string) bool { return provider == "" || provider == OVNProvider }

// AttachmentPortName is Kube-OVN's logical switch port of a pod's attachment:
// "<pod>.<namespace>.<provider>"; the primary provider's is PortName.
func AttachmentPortName(namespace, name, provider string) string {
	if IsPrimary(provider) {
		return PortName(namespace, name)
	}
	return name + "." + namespace + "." + provider
}

// Route is one entry of Kube-OVN's routes annotation. A zero GW is on-link.
type Route struct {
	Dst netip.Prefix
	GW  netip.Addr
}

// ParseRoutes reads the routes annotation: [{"dst": "10.0.0.0/8", "gw": "10.1.0.1"}], as
// Kube-OVN reads it (a missing dst is the default route of gw's family).
func (k Keys) ParseRoutes(a map[string]string) ([]Route, error) {
	v := a[k.Routes]
	if v == "" {
		return nil, nil
	}
	var raw []struct {
		Dst string `json:"dst"`
		GW  string `json:"gw"`
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("annotation %s %q: %w", k.Routes, v, err)
	}
	out := make([]Route, 0, len(raw))
	for _, r := range raw {
		var rt Route
		var err error
		if r.GW != "" {
			if rt.GW, err = netip.ParseAddr(r.GW); err != nil {
				return nil, fmt.Errorf("annotation %s: gw %q: %w", k.Routes, r.GW, err)
			}
		}
		switch {
		case r.Dst != "":
			if rt.Dst, err = netip.ParsePrefix(r.Dst); err != nil {
				return nil, fmt.Errorf("annotation %s: dst %q: %w", k.Routes, r.Dst, err)
			}
		case rt.GW.Is6():
			rt.Dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		case rt.GW.IsValid():
			rt.Dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		default:
			return nil, fmt.Errorf("annotation %s: a route with neither dst nor gw", k.Routes)
		}
		out = append(out, rt)
	}
	return out, nil
}

// WantsDefaultRoute says whether the interface of k carries the pod's default route:
// default_route "true" or "false" says so; unset, only the primary interface does.
func (k Keys) WantsDefaultRoute(a map[string]string, primary bool) bool {
	switch a[k.DefaultRoute] {
	case "true":
		return true
	case "false":
		return false
	}
	return primary
}

// AttachmentProviders returns, sorted, the providers other than the primary's that a's
// "<provider>.kubernetes.io/allocated" keys name.
func AttachmentProviders(a map[string]string) []string {
	var out []string
	for k := range a {
		p, ok := strings.CutSuffix(k, ".kubernetes.io/allocated")
		if ok && !IsPrimary(p) && p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
