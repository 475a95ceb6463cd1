package hostnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"sync"

	"github.com/containernetworking/plugins/pkg/utils"
	"github.com/containernetworking/plugins/pkg/utils/sysctl"
	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
)

// HostPorts serves the pods' hostPorts on this host (what the chained portmap plugin did):
// it holds each pod's mappings, keyed by container ID, and keeps the "ip/ip6
// edgeovn-hostport" tables exactly as they say. The pods' records (their OVS ports'
// external_ids) outlive the process: a start restores from them and rewrites nothing that
// is already right.
//
// Safe for concurrent use: one change at a time, each written in one netlink batch.
type HostPorts struct {
	mu   sync.Mutex
	pods map[string]PodPorts
	log  *slog.Logger
}

// NewHostPorts returns an empty HostPorts; log may be nil.
func NewHostPorts(log *slog.Logger) *HostPorts {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HostPorts{pods: map[string]PodPorts{}, log: log}
}

// Check reports what is wrong with p before anything is wired for it: an invalid mapping, a
// host port twice, or one another pod already holds. It changes nothing.
func (h *HostPorts) Check(p PodPorts) error {
	if err := p.Validate(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return conflict(p, h.pods)
}

// Add serves p's mappings (replacing what its container had). On any error nothing changes,
// in memory or in the kernel.
func (h *HostPorts) Add(ctx context.Context, p PodPorts) error {
	if err := p.Validate(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, had := h.pods[p.ContainerID]
	if len(p.Mappings) == 0 && !had {
		return nil
	}
	if err := conflict(p, h.pods); err != nil {
		return err
	}
	h.pods[p.ContainerID] = p
	if _, err := h.ensureLocked(ctx); err != nil {
		if had {
			h.pods[p.ContainerID] = prev
		} else {
			delete(h.pods, p.ContainerID)
		}
		_, _ = h.ensureLocked(ctx) // one family's table may have been written
		return err
	}
	h.afterAdd(p)
	return nil
}

// afterAdd does what portmap does after its rules: 127.0.0.1 may leave towards the pod
// (route_localnet on the interface that routes to it), and UDP conntrack entries for the
// new host ports, made before they existed, are dropped (or they would keep sending the
// traffic elsewhere). Failures are logged: the mapping works from everywhere but
// 127.0.0.1, or once the stale entries expire.
func (h *HostPorts) afterAdd(p PodPorts) {
	for _, ip := range p.IPs {
		if ip.Addr().Is4() {
			if err := routeLocalnet(net.IP(ip.Addr().AsSlice())); err != nil {
				h.log.Warn("host ports: let 127.0.0.1 reach the pod", "container_id", p.ContainerID, "err", err)
			}
		}
	}
	for _, m := range p.Mappings {
		if m.Protocol != "udp" {
			continue
		}
		for _, fam := range []netlink.InetFamily{netlink.FAMILY_V4, netlink.FAMILY_V6} {
			if err := utils.DeleteConntrackEntriesForDstPort(m.HostPort, utils.PROTOCOL_UDP, fam); err != nil {
				h.log.Warn("host ports: drop stale udp conntrack entries", "container_id", p.ContainerID, "port", m.HostPort, "err", err)
			}
		}
	}
}

// routeLocalnet sets route_localnet on the interface that routes to pod (ovn0), once.
func routeLocalnet(pod net.IP) error {
	routes, err := netlink.RouteGet(pod)
	if err != nil || len(routes) == 0 {
		return fmt.Errorf("route to %s: %w", pod, err)
	}
	link, err := netlink.LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return fmt.Errorf("interface routing to %s: %w", pod, err)
	}
	name := "net/ipv4/conf/" + link.Attrs().Name + "/route_localnet"
	if v, err := sysctl.Sysctl(name); err == nil && v == "1" {
		return nil
	}
	if _, err := sysctl.Sysctl(name, "1"); err != nil {
		return fmt.Errorf("set %s: %w", name, err)
	}
	return nil
}

// Delete stops serving the container's host ports; a container without any is a no-op.
func (h *HostPorts) Delete(ctx context.Context, containerID string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, had := h.pods[containerID]
	if !had {
		return nil
	}
	delete(h.pods, containerID)
	if _, err := h.ensureLocked(ctx); err != nil {
		h.pods[containerID] = prev // the next drift check tries again
		return err
	}
	return nil
}

// Restore replaces what HostPorts holds with the pods' records (at start) and makes the
// tables match; it reports whether it wrote. Records that conflict are all kept (they were
// served together before): the first rule in the table wins, as it did.
func (h *HostPorts) Restore(ctx context.Context, pods []PodPorts) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pods = map[string]PodPorts{}
	for _, p := range pods {
		h.pods[p.ContainerID] = p
	}
	return h.ensureLocked(ctx)
}

// Retain forgets the containers keep does not name (their pod ports were removed without a
// DEL) and makes the tables match; it reports whether it wrote.
func (h *HostPorts) Retain(ctx context.Context, keep map[string]bool) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	maps.DeleteFunc(h.pods, func(cid string, _ PodPorts) bool { return !keep[cid] })
	return h.ensureLocked(ctx)
}

// Ensure makes the tables match what HostPorts holds (the drift check); it reports whether
// it wrote.
func (h *HostPorts) Ensure(ctx context.Context) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ensureLocked(ctx)
}

func (h *HostPorts) ensureLocked(_ context.Context) (bool, error) {
	conn, err := nftables.New()
	if err != nil {
		return false, fmt.Errorf("open nftables: %w", err)
	}
	pods := sortedPods(h.pods)
	wrote := false
	var errs []error
	for _, f := range hostPortFamilies {
		w, err := ensureHostPortTable(conn, f, hostPortChains(f, pods))
		errs = append(errs, err)
		wrote = wrote || w
	}
	if err := errors.Join(errs...); err != nil {
		return wrote, fmt.Errorf("serve host ports: %w", err)
	}
	if wrote {
		h.log.Info("wrote host port rules", "table", hostPortTable, "pods", len(pods))
	}
	return wrote, nil
}
