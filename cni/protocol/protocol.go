package protocol

import "net/netip"

// DefaultSocket is where the daemon listens unless the network configuration says otherwise.
const DefaultSocket = "/run/edgeovn/cni.sock"

// PrimaryProvider is Kube-OVN's provider of the pods' primary network.
const PrimaryProvider = "ovn"

// Path is the HTTP path every request is POSTed to; the command is in the body.
const Path = "/v1/cni"

// Commands, spelled as CNI_COMMAND spells them.
const (
	CommandAdd    = "ADD"
	CommandDel    = "DEL"
	CommandCheck  = "CHECK"
	CommandStatus = "STATUS"
	CommandGC     = "GC"
)

// PodRequest is one CNI invocation forwarded to the daemon.
type PodRequest struct {
	Command     string `json:"command"`
	ContainerID string `json:"containerID,omitempty"`
	Netns       string `json:"netns,omitempty"`
	IfName      string `json:"ifName,omitempty"`
	// Provider is the network configuration's provider: "" (or "ovn") for the pod's primary
	// interface, "<nad>.<namespace>.ovn" for an attachment network Multus delegates.
	Provider string `json:"provider,omitempty"`
	// IPAMOnly: the binary was called as another plugin's IPAM (macvlan with "ipam":
	// {"type": "kube-ovn"}): ADD answers the addresses of Provider without wiring anything,
	// and DEL, CHECK and GC touch no pod port.
	IPAMOnly bool `json:"ipamOnly,omitempty"`

	PodNamespace string `json:"podNamespace,omitempty"`
	PodName      string `json:"podName,omitempty"`
	PodUID       string `json:"podUID,omitempty"`

	// ExpectedIPs are the pod addresses a CHECK verifies, taken from the prevResult.
	ExpectedIPs []netip.Prefix `json:"expectedIPs,omitempty"`
	// ValidAttachments are, for GC, the attachments the runtime still uses.
	ValidAttachments []Attachment `json:"validAttachments,omitempty"`
	// PortMappings are, for ADD, the pod's hostPorts (the runtime's "portMappings"
	// capability), as the runtime sent them: the daemon checks them.
	PortMappings []PortMapping `json:"portMappings,omitempty"`
}

// PortMapping is one entry of the CNI "portMappings" capability, as runtimes send it.
type PortMapping struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
	HostIP        string `json:"hostIP,omitempty"`
}

// Attachment names one still-valid (container, interface) pair for GC.
type Attachment struct {
	ContainerID string `json:"containerID"`
	IfName      string `json:"ifName"`
}

// Response is the daemon's answer to every command. Exactly one of Add and Error is set for
// ADD; for the other commands a nil Error means success.
type Response struct {
	Add   *AddResult `json:"add,omitempty"`
	Error *Error     `json:"error,omitempty"`
}

// AddResult describes the wiring the daemon made for an ADD.
type AddResult struct {
	HostInterface Interface  `json:"hostInterface"`
	PodInterface  Interface  `json:"podInterface"`
	IPs           []IPConfig `json:"ips"`
	Routes        []Route    `json:"routes,omitempty"`
	MTU           int        `json:"mtu,omitempty"`
}

// Interface is one end of the pod's veth pair. Sandbox is empty for the host end.
type Interface struct {
	Name    string `json:"name"`
	MAC     string `json:"mac"`
	Sandbox string `json:"sandbox,omitempty"`
}

// IPConfig is one pod address with its subnet length and the subnet's gateway.
type IPConfig struct {
	Address netip.Prefix `json:"address"`
	Gateway netip.Addr   `json:"gateway,omitzero"`
}

// Route is a route installed in the pod. A zero GW means on-link.
type Route struct {
	Dst netip.Prefix `json:"dst"`
	GW  netip.Addr   `json:"gw,omitzero"`
}

// Error is a CNI error as the spec defines it: Code is one of the spec's codes (for example
// 11 "try again later"), Msg a short message and Details the underlying cause.
type Error struct {
	Code    uint   `json:"code"`
	Msg     string `json:"msg"`
	Details string `json:"details,omitempty"`
}

// CNI error codes the daemon uses; the values are the spec's.
const (
	CodeInvalidEnvironment   uint = 4
	CodeDecodingFailure      uint = 6
	CodeInvalidNetworkConfig uint = 7
	CodeInvalidNetns         uint = 8
	CodeTryAgainLater        uint = 11
	CodePluginNotAvailable   uint = 50
	CodeLimitedConnectivity  uint = 51
	CodeInternal             uint = 999
)

func (e *Error) Error() string {
	if e.Details == "" {
		return e.Msg
	}
	return e.Msg + ": " + e.Details
}
