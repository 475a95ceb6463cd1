package podnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/plugins/pkg/ip"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// SetupRequest describes the veth pair Setup builds for one pod.
type SetupRequest struct {
	Netns      string // path of the pod's network namespace
	IfName     string // pod end's name inside Netns, e.g. eth0
	HostIfName string // host end's name, see HostIfName
	MAC        net.HardwareAddr
	IPs        []netip.Prefix // pod addresses with their subnet length
	Gateways   []netip.Addr   // at most one per address family; default routes go via them
	MTU        int            // 0 keeps the kernel default
	// DisableTxChecksum turns TX checksum offload off on the pod end: the userspace OVS
	// datapath forwards the kernel's never-filled offloaded checksums, and TCP then fails.
	DisableTxChecksum bool
	// NoDefaultRoute leaves out the default routes via Gateways: an attachment network's
	// interface, which is not the pod's way out unless its annotations say so.
	NoDefaultRoute bool
	// Routes are more routes on the interface (a zero GW is on-link).
	Routes []Route
}

// Route is one route on a pod interface.
type Route struct {
	Dst netip.Prefix
	GW  netip.Addr
}

// Result describes the pair Setup made.
type Result struct {
	HostIf    string
	HostIfMAC net.HardwareAddr
	PodIf     string
	PodIfMAC  net.HardwareAddr
	MTU       int
}

func (r SetupRequest) validate() error {
	switch {
	case r.Netns == "":
		return fmt.Errorf("netns is empty: %w", ErrInvalidRequest)
	case r.IfName == "" || r.HostIfName == "":
		return fmt.Errorf("interface names %q/%q: %w", r.IfName, r.HostIfName, ErrInvalidRequest)
	case len(r.HostIfName) > 15 || len(r.IfName) > 15:
		return fmt.Errorf("interface names %q/%q longer than 15 characters: %w", r.IfName, r.HostIfName, ErrInvalidRequest)
	case len(r.IPs) == 0:
		return fmt.Errorf("no addresses for %s: %w", r.HostIfName, ErrInvalidRequest)
	case r.MTU < 0:
		return fmt.Errorf("mtu %d: %w", r.MTU, ErrInvalidRequest)
	}
	for _, p := range r.IPs {
		if !p.IsValid() {
			return fmt.Errorf("address %v: %w", p, ErrInvalidRequest)
		}
	}
	return nil
}

// Setup creates the pod's veth pair and configures the pod end. A pair left under the same
// names by an earlier, interrupted Setup is deleted first. On error nothing new is left
// behind.
func Setup(ctx context.Context, r SetupRequest) (Result, error) {
	if err := r.validate(); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("set up %s: %w", r.HostIfName, err)
	}
	podNS, err := openNetns(r.Netns)
	if err != nil {
		return Result{}, err
	}
	defer podNS.Close()
	if err := deleteLink(r.HostIfName); err != nil {
		return Result{}, fmt.Errorf("remove stale host interface %s: %w", r.HostIfName, err)
	}
	var res Result
	err = podNS.Do(func(hostNS ns.NetNS) error {
		var err error
		res, err = setupInPod(r, hostNS)
		return err
	})
	if err != nil {
		_ = deleteLink(r.HostIfName)
		return Result{}, fmt.Errorf("set up veth %s in %s: %w", r.HostIfName, r.Netns, err)
	}
	return res, nil
}

// setupInPod runs inside the pod's namespace.
func setupInPod(r SetupRequest, hostNS ns.NetNS) (Result, error) {
	if err := deleteStalePodIf(r.IfName); err != nil {
		return Result{}, err
	}
	hostIf, podIf, err := ip.SetupVethWithName(r.IfName, r.HostIfName, r.MTU, macString(r.MAC), hostNS)
	if err != nil {
		return Result{}, fmt.Errorf("create veth pair: %w", err)
	}
	link, err := netlink.LinkByIndex(podIf.Index)
	if err != nil {
		return Result{}, fmt.Errorf("look up %s: %w", r.IfName, err)
	}
	if err := configureAddrs(link, r); err != nil {
		return Result{}, err
	}
	if r.DisableTxChecksum {
		if err := disableTxChecksum(r.IfName); err != nil {
			return Result{}, err
		}
	}
	return Result{
		HostIf: hostIf.Name, HostIfMAC: hostIf.HardwareAddr,
		PodIf: podIf.Name, PodIfMAC: podIf.HardwareAddr, MTU: podIf.MTU,
	}, nil
}

func macString(m net.HardwareAddr) string {
	if len(m) == 0 {
		return ""
	}
	return m.String()
}
