package server

import (
	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// ExtIDProvider is the external_ids key on the OVS port of an attachment network: its
// provider ("<nad>.<namespace>.ovn"). The primary interface's port has none.
const ExtIDProvider = "provider"

// primaryProvider is Kube-OVN's provider of the primary network.
const primaryProvider = "ovn"

// attachmentProvider is the request's attachment provider, "" for the primary network
// (no provider, or "ovn").
//
// eth0 is always the primary network: a pod whose v1.multus-cni.io/default-network names a
// kube-ovn NAD has Multus call this plugin for eth0 with that NAD's provider, and the
// controller put its primary allocation on that NAD's Subnet (agent/controller, defaultnet.go).
func attachmentProvider(req protocol.PodRequest) string {
	if req.Provider == primaryProvider || req.IfName == primaryIfName {
		return ""
	}
	return req.Provider
}

// primaryIfName is the pod's primary interface, which Multus names eth0.
const primaryIfName = "eth0"

// hostIfName names the host end of the request's veth: the container's for the primary
// network, the container's and interface's for an attachment (a pod has one per network).
func hostIfName(req protocol.PodRequest) string {
	if attachmentProvider(req) != "" {
		return podnet.AttachmentHostIfName(req.ContainerID, req.IfName)
	}
	return podnet.HostIfName(req.ContainerID)
}
