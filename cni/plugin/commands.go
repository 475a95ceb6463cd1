package plugin

import (
	"context"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// About is what the binary prints when run without CNI_COMMAND.
const About = "edgeovn"

// Versions lists the CNI spec versions whose configurations the binary serves.
var Versions = version.PluginSupports("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0")

// Funcs returns the skel callbacks. ctx bounds every call to the daemon (main cancels it on
// SIGTERM).
func Funcs(ctx context.Context) skel.CNIFuncs {
	return skel.CNIFuncs{
		Add:    func(a *skel.CmdArgs) error { return cmdAdd(ctx, a) },
		Del:    func(a *skel.CmdArgs) error { return cmdDel(ctx, a) },
		Check:  func(a *skel.CmdArgs) error { return cmdCheck(ctx, a) },
		Status: func(a *skel.CmdArgs) error { return cmdStatus(ctx, a) },
		GC:     func(a *skel.CmdArgs) error { return cmdGC(ctx, a) },
	}
}

func podRequest(command string, a *skel.CmdArgs, pod PodArgs, conf *NetConf) protocol.PodRequest {
	return protocol.PodRequest{
		Provider:     conf.Provider,
		IPAMOnly:     conf.ipamOnly,
		Command:      command,
		ContainerID:  a.ContainerID,
		Netns:        a.Netns,
		IfName:       a.IfName,
		PodNamespace: string(pod.K8S_POD_NAMESPACE),
		PodName:      string(pod.K8S_POD_NAME),
		PodUID:       string(pod.K8S_POD_UID),
	}
}

func cmdAdd(ctx context.Context, a *skel.CmdArgs) error {
	conf, err := LoadNetConf(a.StdinData)
	if err != nil {
		return err
	}
	pod, err := LoadPodArgs(a.Args, true)
	if err != nil {
		return err
	}
	req := podRequest(protocol.CommandAdd, a, pod, conf)
	req.PortMappings = conf.RuntimeConfig.PortMappings
	resp, err := call(ctx, callRequest{Socket: conf.ServerSocket, Timeout: conf.timeout, Window: restartWindow,
		Req: req, UnreachableCode: types.ErrTryAgainLater})
	if err != nil {
		return err
	}
	if resp.Add == nil {
		return types.NewError(types.ErrInternal, "edgeovn daemon answered ADD without a result", "")
	}
	if conf.ipamOnly {
		return types.PrintResult(toIPAMResult(resp.Add), conf.CNIVersion)
	}
	res, err := mergePrev(conf.PrevResult, toResult(resp.Add))
	if err != nil {
		return err
	}
	return types.PrintResult(res, conf.CNIVersion)
}

// cmdDel forwards DEL. The pod's identity is optional: DEL must work for pods the API no
// longer knows, and the daemon finds everything by container ID.
//
// An IPAM call whose ipam section is bad succeeds: its ADD failed on the same section and
// held nothing, and the calling plugin (macvlan) removes its interface only after its IPAM's
// DEL succeeds.
func cmdDel(ctx context.Context, a *skel.CmdArgs) error {
	conf, err := LoadNetConf(a.StdinData)
	if err != nil {
		if ipamCall(a.StdinData) {
			return nil
		}
		return err
	}
	pod, err := LoadPodArgs(a.Args, false)
	if err != nil {
		return err
	}
	req := podRequest(protocol.CommandDel, a, pod, conf)
	_, err = call(ctx, callRequest{Socket: conf.ServerSocket, Timeout: conf.timeout, Window: restartWindow,
		Req: req, UnreachableCode: types.ErrTryAgainLater})
	return err
}

func cmdCheck(ctx context.Context, a *skel.CmdArgs) error {
	conf, err := LoadNetConf(a.StdinData)
	if err != nil {
		return err
	}
	pod, err := LoadPodArgs(a.Args, false)
	if err != nil {
		return err
	}
	ips, err := expectedIPs(conf.PrevResult, a.IfName)
	if err != nil {
		return err
	}
	req := podRequest(protocol.CommandCheck, a, pod, conf)
	req.ExpectedIPs = ips
	_, err = call(ctx, callRequest{Socket: conf.ServerSocket, Timeout: conf.timeout, Window: restartWindow,
		Req: req, UnreachableCode: types.ErrTryAgainLater})
	return err
}

func cmdStatus(ctx context.Context, a *skel.CmdArgs) error {
	conf, err := LoadNetConf(a.StdinData)
	if err != nil {
		return err
	}
	req := protocol.PodRequest{Command: protocol.CommandStatus}
	_, err = call(ctx, callRequest{Socket: conf.ServerSocket, Timeout: conf.timeout, Window: statusRestartWindow,
		Req: req, UnreachableCode: types.ErrPluginNotAvailable})
	return err
}

func cmdGC(ctx context.Context, a *skel.CmdArgs) error {
	conf, err := LoadNetConf(a.StdinData)
	if err != nil {
		return err
	}
	req := protocol.PodRequest{Command: protocol.CommandGC, Provider: conf.Provider, IPAMOnly: conf.ipamOnly}
	for _, v := range conf.ValidAttachments {
		req.ValidAttachments = append(req.ValidAttachments, protocol.Attachment{ContainerID: v.ContainerID, IfName: v.IfName})
	}
	_, err = call(ctx, callRequest{Socket: conf.ServerSocket, Timeout: conf.timeout, Window: restartWindow,
		Req: req, UnreachableCode: types.ErrTryAgainLater})
	return err
}
