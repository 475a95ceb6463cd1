package multus

import (
	"encoding/json"
	"fmt"
)

// KubeOVNType is the CNI type of Kube-OVN's (and edgeovn's) plugin in a NAD's config.
const KubeOVNType = "kube-ovn"

// NetConf is what edgeovn reads of a NetworkAttachmentDefinition's spec.config: a single
// plugin's config or a conflist's plugins.
type NetConf struct {
	Type     string `json:"type"`
	Provider string `json:"provider"`
	// ServerSocket is Kube-OVN's daemon socket; edgeovn's plugin ignores it and uses its own.
	ServerSocket string `json:"server_socket"`
	IPAM         struct {
		Type     string `json:"type"`
		Provider string `json:"provider"`
	} `json:"ipam"`
	Plugins []NetConf `json:"plugins"`
}

// ParseNetConf reads spec.config.
func ParseNetConf(config string) (NetConf, error) {
	var c NetConf
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return c, fmt.Errorf("spec.config is not a CNI configuration: %w", err)
	}
	return c, nil
}

// KubeOVN returns the kube-ovn plugin's config: the config itself or the conflist's plugin of
// type kube-ovn. False for a NAD of another plugin.
func (c NetConf) KubeOVN() (NetConf, bool) {
	if c.Type == KubeOVNType {
		return c, true
	}
	for _, p := range c.Plugins {
		if p.Type == KubeOVNType {
			return p, true
		}
	}
	return NetConf{}, false
}

// KubeOVNIPAM says whether the config is another plugin's (macvlan, ipvlan, ...) with
// Kube-OVN as its IPAM: "ipam": {"type": "kube-ovn"}, in the config itself or in one of a
// conflist's plugins.
func (c NetConf) KubeOVNIPAM() bool {
	if c.Type != KubeOVNType && c.IPAM.Type == KubeOVNType {
		return true
	}
	for _, p := range c.Plugins {
		if p.Type != KubeOVNType && p.IPAM.Type == KubeOVNType {
			return true
		}
	}
	return false
}
