package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/cni/server"
)

// hostPorts adapts hostnet.HostPorts to the CNI server: the runtime's mappings are parsed
// here, and hostnet's ErrInvalid becomes the server's ErrInvalidPortMappings.
type hostPorts struct{ h *hostnet.HostPorts }

var _ server.HostPorts = hostPorts{}

func (a hostPorts) Check(p server.PodHostPorts) (string, error) {
	pp, err := podPorts(p)
	if err == nil {
		err = a.h.Check(pp)
	}
	if err != nil {
		return "", invalidPorts(err)
	}
	return hostnet.RecordHostPorts(pp)
}

func (a hostPorts) Add(ctx context.Context, p server.PodHostPorts) error {
	pp, err := podPorts(p)
	if err == nil {
		err = a.h.Add(ctx, pp)
	}
	return invalidPorts(err)
}

func (a hostPorts) Delete(ctx context.Context, containerID string) error {
	return a.h.Delete(ctx, containerID)
}

func invalidPorts(err error) error {
	if errors.Is(err, hostnet.ErrInvalid) {
		return fmt.Errorf("%w: %w", server.ErrInvalidPortMappings, err)
	}
	return err
}

func podPorts(p server.PodHostPorts) (hostnet.PodPorts, error) {
	out := hostnet.PodPorts{ContainerID: p.ContainerID, IPs: p.IPs}
	for _, m := range p.Mappings {
		pm, err := hostnet.ParsePortMapping(m.HostPort, m.ContainerPort, m.Protocol, m.HostIP)
		if err != nil {
			return hostnet.PodPorts{}, err
		}
		out.Mappings = append(out.Mappings, pm)
	}
	return out, nil
}

// restoreHostPorts serves, at start, the host ports recorded on the pod ports of br-int
// (server.ExtIDHostPorts): a restart keeps them, and writes nothing when the tables already
// match. A damaged record is logged and skipped: that pod loses its host ports, no other.
func (r *Role) restoreHostPorts(ctx context.Context, log *slog.Logger) error {
	ports, err := r.ovs.Ports(ctx, Bridge)
	if err != nil {
		return fmt.Errorf("list pod ports for their host ports: %w", err)
	}
	var pods []hostnet.PodPorts
	for _, p := range ports {
		rec, cid := p.ExternalIDs[server.ExtIDHostPorts], p.ExternalIDs[server.ExtIDContainerID]
		if rec == "" || cid == "" {
			continue
		}
		pp, err := hostnet.ParseHostPortsRecord(cid, rec)
		if err != nil {
			log.Warn("host ports record unreadable, not served", "port", p.Name, "container_id", cid, "err", err)
			continue
		}
		pods = append(pods, pp)
	}
	wrote, err := r.hostPorts.Restore(ctx, pods)
	if wrote {
		log.Warn("repaired: host port rules differed from the pods' records, rewrote them", "pods", len(pods))
	}
	return err
}

// repairHostPorts is the drift check's: the tables rewritten when they differ (a flushed
// ruleset, a deleted table).
func (r *Role) repairHostPorts(ctx context.Context, log *slog.Logger) error {
	wrote, err := r.hostPorts.Ensure(ctx)
	if wrote {
		log.Warn("repaired: host port rules differed, rewrote them", "table", "edgeovn-hostport")
	}
	return err
}

// retainHostPorts forgets the host ports of pods whose ports the sweep removed (their
// network namespace went without a DEL).
func (r *Role) retainHostPorts(ctx context.Context, log *slog.Logger) error {
	ports, err := r.ovs.Ports(ctx, Bridge)
	if err != nil {
		return fmt.Errorf("list pod ports: %w", err)
	}
	keep := map[string]bool{}
	for _, p := range ports {
		if cid := p.ExternalIDs[server.ExtIDContainerID]; cid != "" {
			keep[cid] = true
		}
	}
	wrote, err := r.hostPorts.Retain(ctx, keep)
	if wrote {
		log.Warn("repaired: removed the host ports of pods whose ports are gone")
	}
	return err
}
