package node

import (
	"time"

	"github.com/containernetworking/plugins/pkg/utils"
)

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

// portmapProbeWait bounds how long writing the conflist waits for the probe, which normally
// ends long before (it starts with the node role). iptables --wait can block behind another
// holder of the xtables lock: the conflist is then written without a backend (portmap probes
// for itself, as it would anyway), and the next drift check writes it in.
const portmapProbeWait = time.Second

// portmapProbe runs detectPortmapBackend once, in the background.
type portmapProbe struct {
	done    chan struct{}
	backend string // set before done is closed
}

func startPortmapProbe(detect func() string) *portmapProbe {
	p := &portmapProbe{done: make(chan struct{})}
	go func() {
		p.backend = detect()
		close(p.done)
	}()
	return p
}

// get returns the backend detected, waiting up to wait for the probe; "" while it still runs.
func (p *portmapProbe) get(wait time.Duration) string {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.done:
		return p.backend
	case <-t.C:
		return ""
	}
}
