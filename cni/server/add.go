package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// rollbackTimeout bounds the cleanup after a failed ADD, which runs even when the request's
// own context has ended.
const rollbackTimeout = 10 * time.Second

func validateAdd(req protocol.PodRequest) *protocol.Error {
	switch {
	case req.ContainerID == "":
		return badRequest("ADD without a container ID")
	case req.PodNamespace == "" || req.PodName == "":
		return badRequest("ADD for container %s lacks K8S_POD_NAMESPACE or K8S_POD_NAME in CNI_ARGS (namespace %q, name %q)",
			req.ContainerID, req.PodNamespace, req.PodName)
	}
	if err := podnet.ValidateIfName(req.IfName); err != nil {
		return &protocol.Error{Code: protocol.CodeInvalidEnvironment,
			Msg: fmt.Sprintf("ADD for pod %s/%s: bad CNI_IFNAME", req.PodNamespace, req.PodName), Details: err.Error()}
	}
	if err := podnet.ValidateNetns(req.Netns); err != nil {
		return &protocol.Error{Code: protocol.CodeInvalidNetns,
			Msg: fmt.Sprintf("ADD for pod %s/%s: bad netns %q", req.PodNamespace, req.PodName, req.Netns), Details: err.Error()}
	}
	return nil
}

func (s *Server) add(ctx context.Context, req protocol.PodRequest) (*protocol.AddResult, *protocol.Error) {
	if s.cfg.AddStarted != nil {
		s.cfg.AddStarted()
	}
	if perr := validateAdd(req); perr != nil {
		return nil, perr
	}
	s.gcLock.RLock()
	defer s.gcLock.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	log := s.requestLog(req)

	if err := timed(log, "check datapath", func() error { return s.cfg.AddReady(ctx) }); err != nil {
		return nil, retryable("node datapath not ready, try again later", err)
	}
	var pn PodNetwork
	err := timed(log, "wait for allocation", func() (err error) {
		pn, err = s.cfg.Pods.WaitPodNetwork(ctx, PodKey{Namespace: req.PodNamespace, Name: req.PodName, UID: req.PodUID,
			Provider: attachmentProvider(req)})
		return err
	})
	if err != nil {
		return nil, cniError(fmt.Sprintf("wait for the network of pod %s/%s", req.PodNamespace, req.PodName), err)
	}
	if pn.Port == "" || len(pn.IPs) == 0 {
		return nil, &protocol.Error{Code: protocol.CodeInternal,
			Msg: fmt.Sprintf("allocation of pod %s/%s lacks a port or addresses", req.PodNamespace, req.PodName)}
	}
	log = log.With("subnet", pn.Switch, "lsp", pn.Port, "ip", joinIPs(pn))
	if attachmentProvider(req) != "" {
		req.PortMappings = nil // hostPorts are the primary network's
	}
	hp, perr := s.checkHostPorts(req, pn)
	if perr != nil {
		return nil, perr
	}
	res, perr := s.wire(ctx, log, req, pn, hp)
	if perr != nil {
		s.rollback(ctx, log, req)
		return nil, perr
	}
	log.Info("pod network added", "duration", time.Since(start))
	return addResult(req, res, pn), nil
}

// wire builds the veth pair, plugs it into br-int and waits for OVN to bind it.
func (s *Server) wire(ctx context.Context, log *slog.Logger, req protocol.PodRequest, pn PodNetwork, hp hostPorts) (podnet.Result, *protocol.Error) {
	hostIf := hostIfName(req)
	var res podnet.Result
	err := timed(log, "set up veth", func() (err error) {
		res, err = podnet.Setup(ctx, podnet.SetupRequest{
			Netns: req.Netns, IfName: req.IfName, HostIfName: hostIf,
			MAC: pn.MAC, IPs: pn.IPs, Gateways: pn.Gateways, MTU: pn.MTU,
			DisableTxChecksum: s.cfg.DisableTxChecksum, NoDefaultRoute: pn.NoDefaultRoute, Routes: pn.Routes,
		})
		return err
	})
	if err != nil {
		return res, cniError("set up pod interface "+hostIf, err)
	}
	port := PortRequest{Name: hostIf, IfaceID: pn.Port, ExternalIDs: externalIDs(req, pn)}
	shape := ShapeRequest{Namespace: req.PodNamespace, Name: req.PodName, Port: hostIf, Netns: req.Netns, IfName: req.IfName}
	shaped := s.cfg.Shaper != nil && attachmentProvider(req) == ""
	if shaped {
		port.QoS = s.cfg.Shaper.PortQoS(shape)
	}
	if hp.record != "" {
		port.ExternalIDs[ExtIDHostPorts] = hp.record
	}
	if err := timed(log, "add ovs port", func() error { return s.cfg.Ports.AddPort(ctx, port) }); err != nil {
		return res, retryable("add ovs port "+hostIf, err)
	}
	if hp.record != "" {
		if err := timed(log, "serve host ports", func() error { return s.cfg.HostPorts.Add(ctx, hp.pod) }); err != nil {
			return res, hostPortsError(req, err)
		}
	}
	if shaped {
		if err := timed(log, "apply qos", func() error { return s.cfg.Shaper.ShapePort(ctx, shape) }); err != nil {
			return res, retryable("apply the bandwidth limits of port "+hostIf, err)
		}
	}
	if err := timed(log, "wait for ovn-installed", func() error { return s.cfg.Ports.WaitInstalled(ctx, hostIf) }); err != nil {
		return res, retryable(fmt.Sprintf("wait for OVN to bind port %s (lsp %s)", hostIf, pn.Port), err)
	}
	return res, nil
}

// rollback removes what a failed ADD made; the runtime's DEL would too, but a failed ADD is
// not always followed by one.
func (s *Server) rollback(ctx context.Context, log *slog.Logger, req protocol.PodRequest) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	hostIf := hostIfName(req)
	if s.cfg.HostPorts != nil && attachmentProvider(req) == "" {
		if err := s.cfg.HostPorts.Delete(ctx, req.ContainerID); err != nil {
			log.Warn("roll back failed add: stop serving host ports", "err", err)
		}
	}
	if err := s.cfg.Ports.DeletePort(ctx, hostIf); err != nil {
		log.Warn("roll back failed add: delete port", "err", err)
	}
	if err := podnet.Teardown(ctx, hostIf, req.Netns); err != nil {
		log.Warn("roll back failed add: delete veth", "err", err)
	}
}

func externalIDs(req protocol.PodRequest, pn PodNetwork) map[string]string {
	ids := map[string]string{
		ExtIDPodNamespace: req.PodNamespace,
		ExtIDPodName:      req.PodName,
		ExtIDContainerID:  req.ContainerID,
		ExtIDPodNetns:     req.Netns,
		ExtIDIfName:       req.IfName,
		ExtIDIP:           joinIPs(pn),
	}
	if req.PodUID != "" {
		ids[ExtIDPodUID] = req.PodUID
	}
	if p := attachmentProvider(req); p != "" {
		ids[ExtIDProvider] = p
	}
	return ids
}

// joinIPs renders the pod's addresses for logs and external_ids, Kube-OVN style.
func joinIPs(pn PodNetwork) string {
	s := make([]string, 0, len(pn.IPs))
	for _, p := range pn.IPs {
		s = append(s, p.Addr().String())
	}
	return strings.Join(s, ",")
}

func timed(log *slog.Logger, step string, f func() error) error {
	start := time.Now()
	err := f()
	log.Debug("cni add step", "step", step, "duration", time.Since(start), "err", err)
	return err
}
