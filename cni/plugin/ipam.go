package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// IPAM mode: another plugin (macvlan, ipvlan) names this binary as its IPAM,
// "ipam": {"type": "kube-ovn", "provider": "<nad>.<namespace>"}, as with Kube-OVN's binary.
// The call then asks the daemon for the pod's address of that provider (the annotations the
// controller writes) and answers a CNI IPAM result: addresses, routes, no interface.

// ipamTypes are the IPAM types that make a call an IPAM call: Kube-OVN's name, and edgeovn's.
var ipamTypes = map[string]bool{"kube-ovn": true, "edgeovn": true}

// IPAMConf is the "ipam" section edgeovn reads.
type IPAMConf struct {
	Type string `json:"type"`
	// Provider is the Subnet's spec.provider: "<nad>.<namespace>" for the NAD naming it.
	Provider string `json:"provider,omitempty"`
	// ServerSocket is the daemon's socket (protocol.DefaultSocket when empty); Kube-OVN's
	// "server_socket" is ignored, as in the plugin's own config.
	ServerSocket string `json:"serverSocket,omitempty"`
}

// applyIPAM turns conf into an IPAM call when its plugin is another's and its ipam section
// names this binary: the provider and socket come from the ipam section.
func applyIPAM(conf *NetConf) error {
	if ipamTypes[conf.Type] || !ipamTypes[conf.IPAM.Type] {
		return nil
	}
	if conf.IPAM.Provider == "" {
		return types.NewError(types.ErrInvalidNetworkConfig,
			fmt.Sprintf("ipam.provider is required with \"ipam\": {\"type\": %q} (plugin %s)", conf.IPAM.Type, conf.Type),
			"want the provider of the Subnet to take addresses from, \"<nad>.<namespace>\"")
	}
	if conf.IPAM.Provider == protocol.PrimaryProvider || strings.HasSuffix(conf.IPAM.Provider, ".ovn") {
		return types.NewError(types.ErrInvalidNetworkConfig,
			fmt.Sprintf("ipam.provider %q names an OVN network, not an IPAM-only Subnet", conf.IPAM.Provider),
			"want \"<nad>.<namespace>\" (no \".ovn\"): the Subnet whose spec.provider it is")
	}
	conf.ipamOnly = true
	conf.Provider = conf.IPAM.Provider
	conf.ServerSocket = conf.IPAM.ServerSocket
	return nil
}

// ipamCall says whether stdin is an IPAM call even when it does not parse as a whole: another
// plugin's type with an ipam section of type kube-ovn (or edgeovn).
func ipamCall(stdin []byte) bool {
	var c struct {
		Type string `json:"type"`
		IPAM struct {
			Type any `json:"type"`
		} `json:"ipam"`
	}
	if json.Unmarshal(stdin, &c) != nil {
		// The ipam section itself is malformed beyond its type: look for its type alone.
		var m map[string]any
		if json.Unmarshal(stdin, &m) != nil {
			return false
		}
		ipam, _ := m["ipam"].(map[string]any)
		c.Type, _ = m["type"].(string)
		c.IPAM.Type = ipam["type"]
	}
	t, _ := c.IPAM.Type.(string)
	return !ipamTypes[c.Type] && ipamTypes[t]
}

// decodeError names the configuration field a type mismatch is in ("ipam.provider").
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return types.NewError(types.ErrDecodingFailure,
			fmt.Sprintf("parse network configuration: field %s is a JSON %s, want %s", te.Field, te.Value, te.Type), err.Error())
	}
	return types.NewError(types.ErrDecodingFailure, "parse network configuration", err.Error())
}

// toIPAMResult is the IPAM result of the daemon's answer: the addresses (on no interface:
// the calling plugin puts them on its own) and the routes.
func toIPAMResult(a *protocol.AddResult) *types100.Result {
	res := &types100.Result{CNIVersion: types100.ImplementedSpecVersion}
	for _, ipc := range a.IPs {
		res.IPs = append(res.IPs, &types100.IPConfig{Address: *prefixToIPNet(ipc.Address), Gateway: addrToIP(ipc.Gateway)})
	}
	for _, r := range a.Routes {
		res.Routes = append(res.Routes, &types.Route{Dst: *prefixToIPNet(r.Dst), GW: addrToIP(r.GW)})
	}
	return res
}
