package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// gc removes the ports and host veths of containers that are not among the runtime's valid
// attachments. Ports without a container ID are not edgeovn's pod ports and are kept.
func (s *Server) gc(ctx context.Context, req protocol.PodRequest) *protocol.Error {
	s.gcLock.Lock()
	defer s.gcLock.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()

	valid := make(map[protocol.Attachment]bool, len(req.ValidAttachments))
	keep := make(map[string]bool, len(req.ValidAttachments))
	for _, a := range req.ValidAttachments {
		valid[a] = true
		keep[podnet.HostIfName(a.ContainerID)] = true
		keep[podnet.AttachmentHostIfName(a.ContainerID, a.IfName)] = true
	}
	ports, err := s.cfg.Ports.ListPorts(ctx)
	if err != nil {
		return retryable("list ovs ports for gc", err)
	}
	var errs []error
	for _, p := range ports {
		cid := p.ExternalIDs[ExtIDContainerID]
		if cid == "" || valid[protocol.Attachment{ContainerID: cid, IfName: p.ExternalIDs[ExtIDIfName]}] {
			keep[p.Name] = true
			continue
		}
		if s.cfg.HostPorts != nil {
			if err := s.cfg.HostPorts.Delete(ctx, cid); err != nil {
				errs = append(errs, fmt.Errorf("stop serving the host ports of stale container %s: %w", cid, err))
				continue
			}
		}
		errs = append(errs, s.collect(ctx, p.Name, p.ExternalIDs[ExtIDPodNetns], true))
	}
	hostIfs, err := podnet.ListHostIfs(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, name := range hostIfs {
		if !keep[name] {
			errs = append(errs, s.collect(ctx, name, "", false))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return retryable("garbage-collect pod networks", err)
	}
	return nil
}

func (s *Server) collect(ctx context.Context, hostIf, netns string, port bool) error {
	if port {
		if err := s.cfg.Ports.DeletePort(ctx, hostIf); err != nil {
			return fmt.Errorf("delete stale port %s: %w", hostIf, err)
		}
	}
	if err := podnet.Teardown(ctx, hostIf, netns); err != nil {
		return err
	}
	s.cfg.Log.Info("garbage-collected pod network", "verb", protocol.CommandGC, "netns", netns, "port", hostIf)
	return nil
}
