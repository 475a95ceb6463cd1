package node

import "github.com/containernetworking/plugins/pkg/utils"

// Backends of the portmap plugin (its "backend" option).
const (
	portmapIPTables = "iptables"
	portmapNFTables = "nftables"
)

// detectPortmapBackend decides, as portmap itself decides when its config names no backend,
// which netfilter backend serves hostPort on this host: iptables when it works, else
// nftables, else none (""; portmap then fails only for a pod that asks for a hostPort). The
// node role decides once per start and writes it into the conflist: without it, portmap runs
// `iptables --version` and `iptables -S INPUT` on every ADD and DEL, two more process
// starts on the path of every pod's network, hostPort or not.
func detectPortmapBackend() string {
	switch {
	case utils.SupportsIPTables():
		return portmapIPTables
	case utils.SupportsNFTables():
		return portmapNFTables
	}
	return ""
}
