package plugin

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// DefaultTimeout bounds one call to the daemon. It is longer than the daemon's own ADD
// timeout (60 s by default) so that the daemon's error, which says what it waited for,
// arrives before the binary gives up.
const DefaultTimeout = 90 * time.Second

// NetConf is the network configuration: the standard fields plus edgeovn's.
type NetConf struct {
	types.PluginConf
	// ServerSocket is the daemon's unix socket; protocol.DefaultSocket when empty.
	ServerSocket string `json:"serverSocket,omitempty"`
	// Provider is Kube-OVN's: set in a NetworkAttachmentDefinition's config
	// ("<nad>.<namespace>.ovn"), it makes the call serve that attachment network on the
	// interface the runtime (Multus) names. Kube-OVN's "server_socket" (its daemon's socket)
	// is ignored: the daemon is edgeovn's, at ServerSocket.
	Provider string `json:"provider,omitempty"`
	// Timeout is a Go duration ("90s") bounding one call to the daemon; DefaultTimeout when
	// empty.
	Timeout string `json:"timeout,omitempty"`
	// RuntimeConfig carries the capabilities the config declares that the runtime fills in:
	// portMappings (hostPort), which the daemon serves.
	RuntimeConfig struct {
		PortMappings []protocol.PortMapping `json:"portMappings,omitempty"`
	} `json:"runtimeConfig,omitempty"`

	// IPAM is the ipam section: with another plugin's type and "type": "kube-ovn" in it,
	// the call is an IPAM call (ipam.go).
	IPAM IPAMConf `json:"ipam,omitzero"`

	timeout  time.Duration
	ipamOnly bool
}

// LoadNetConf parses the configuration from stdin, applies defaults and parses the
// prevResult when there is one.
func LoadNetConf(stdin []byte) (*NetConf, error) {
	conf := &NetConf{}
	if err := json.Unmarshal(stdin, conf); err != nil {
		return nil, decodeError(err)
	}
	if err := applyIPAM(conf); err != nil {
		return nil, err
	}
	if conf.ServerSocket == "" {
		conf.ServerSocket = protocol.DefaultSocket
	}
	conf.timeout = DefaultTimeout
	if conf.Timeout != "" {
		d, err := time.ParseDuration(conf.Timeout)
		if err != nil || d <= 0 {
			return nil, types.NewError(types.ErrInvalidNetworkConfig,
				fmt.Sprintf("invalid timeout %q in network configuration", conf.Timeout), "want a positive Go duration such as \"90s\"")
		}
		conf.timeout = d
	}
	if err := version.ParsePrevResult(&conf.PluginConf); err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "parse prevResult", err.Error())
	}
	return conf, nil
}

// PodArgs are the CNI_ARGS Kubernetes runtimes pass.
type PodArgs struct {
	types.CommonArgs
	K8S_POD_NAMESPACE          types.UnmarshallableString //nolint:revive // CNI_ARGS key
	K8S_POD_NAME               types.UnmarshallableString //nolint:revive // CNI_ARGS key
	K8S_POD_UID                types.UnmarshallableString //nolint:revive // CNI_ARGS key
	K8S_POD_INFRA_CONTAINER_ID types.UnmarshallableString //nolint:revive // CNI_ARGS key
}

// LoadPodArgs parses CNI_ARGS. Unknown keys are ignored: runtimes add their own, and only
// the pod's identity matters here. requirePod makes a missing namespace or name an error.
func LoadPodArgs(args string, requirePod bool) (PodArgs, error) {
	var a PodArgs
	a.IgnoreUnknown = true
	if err := types.LoadArgs(args, &a); err != nil {
		return PodArgs{}, types.NewError(types.ErrInvalidEnvironmentVariables, "parse CNI_ARGS", err.Error())
	}
	if requirePod && (a.K8S_POD_NAMESPACE == "" || a.K8S_POD_NAME == "") {
		return PodArgs{}, types.NewError(types.ErrInvalidEnvironmentVariables,
			"CNI_ARGS lacks K8S_POD_NAMESPACE or K8S_POD_NAME",
			fmt.Sprintf("got namespace %q name %q; edgeovn serves Kubernetes pods only", a.K8S_POD_NAMESPACE, a.K8S_POD_NAME))
	}
	return a, nil
}
