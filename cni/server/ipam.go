package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// IPAM calls: another plugin (macvlan) names the binary as its IPAM with a provider
// "<nad>.<namespace>". The address is the pod's, allocated by the controller on the Subnet of
// that provider and annotated "<provider>.kubernetes.io/..."; ADD waits for it as for any
// attachment and answers it without wiring anything. The node holds nothing per container:
// DEL, CHECK and GC have no port or veth to look at, and the address goes when the pod does
// (the controller releases it, as an attachment's).

// SubnetProviders says whether a Subnet with spec.provider p is applied: checked is false
// while the node has not read the Subnets yet (then an ADD just waits).
type SubnetProviders func(p string) (known, checked bool)

func validateIPAM(req protocol.PodRequest) *protocol.Error {
	switch {
	case req.ContainerID == "":
		return badRequest("%s (ipam) without a container ID", req.Command)
	case req.Command == protocol.CommandAdd && (req.PodNamespace == "" || req.PodName == ""):
		return badRequest("ADD (ipam) for container %s lacks K8S_POD_NAMESPACE or K8S_POD_NAME in CNI_ARGS (namespace %q, name %q)",
			req.ContainerID, req.PodNamespace, req.PodName)
	case req.Provider == "" || req.Provider == primaryProvider || strings.HasSuffix(req.Provider, ".ovn"):
		return &protocol.Error{Code: protocol.CodeInvalidNetworkConfig,
			Msg: fmt.Sprintf("ipam.provider %q: want an IPAM-only provider \"<nad>.<namespace>\"", req.Provider)}
	}
	return nil
}

// ipamAdd waits for the pod's allocation of the request's provider and answers it: its
// addresses with their gateway, its routes annotation, a default route only when its
// default_route annotation asks for one.
func (s *Server) ipamAdd(ctx context.Context, req protocol.PodRequest) (*protocol.AddResult, *protocol.Error) {
	if perr := validateIPAM(req); perr != nil {
		return nil, perr
	}
	if s.cfg.SubnetProviders != nil {
		if known, checked := s.cfg.SubnetProviders(req.Provider); checked && !known {
			return nil, &protocol.Error{Code: protocol.CodeInvalidNetworkConfig,
				Msg:     fmt.Sprintf("ipam.provider %s: no Subnet has spec.provider %s", req.Provider, req.Provider),
				Details: "create the Subnet the NAD's addresses come from, with spec.provider \"<nad>.<namespace>\""}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	log := s.requestLog(req)
	pn, err := s.cfg.Pods.WaitPodNetwork(ctx, PodKey{Namespace: req.PodNamespace, Name: req.PodName, UID: req.PodUID, Provider: req.Provider})
	if err != nil {
		return nil, cniError(fmt.Sprintf("wait for the %s address of pod %s/%s", req.Provider, req.PodNamespace, req.PodName), err)
	}
	if len(pn.IPs) == 0 {
		return nil, &protocol.Error{Code: protocol.CodeInternal,
			Msg: fmt.Sprintf("allocation %s of pod %s/%s has no addresses", req.Provider, req.PodNamespace, req.PodName)}
	}
	log.Info("pod address answered (ipam)", "provider", req.Provider, "subnet", pn.Switch, "ip", joinIPs(pn), "duration", time.Since(start))
	return addResult(req, podnet.Result{}, pn), nil
}

// ipamOther serves DEL, CHECK and GC of an IPAM call: nothing of the node's to remove or
// look at. In particular a GC's list of valid attachments is the calling plugin's network's
// only: it must never reach the pod ports' GC, which would take every other pod's port.
func (s *Server) ipamOther(req protocol.PodRequest) *protocol.Error {
	if req.Command != protocol.CommandGC {
		if perr := validateIPAM(req); perr != nil {
			return perr
		}
	}
	s.requestLog(req).Debug("ipam request: nothing held on the node", "provider", req.Provider)
	return nil
}
