package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// DefaultTimeout bounds one ADD: waiting for the allocation, wiring, and OVN's binding.
const DefaultTimeout = 60 * time.Second

// Defaults of the connection timeouts: the plugin writes its request at once (well under a
// kilobyte) and closes the connection after the answer.
const (
	DefaultReadTimeout = 10 * time.Second
	DefaultIdleTimeout = 30 * time.Second
)

// DefaultDrainTimeout: a request in flight at shutdown usually needs milliseconds; one that
// still waits after this (an allocation from a controller that is stopping too) is better
// retried against the next daemon than held up while the restart waits.
const DefaultDrainTimeout = 2 * time.Second

// PodKey identifies a pod as the runtime names it in CNI_ARGS, and which of its networks:
// Provider "" is its primary network, "<nad>.<namespace>.ovn" an attachment network.
type PodKey struct{ Namespace, Name, UID, Provider string }

// PodNetwork is what the controller allocated for a pod.
type PodNetwork struct {
	Switch   string
	Port     string // logical switch port name, the host end's iface-id
	MAC      net.HardwareAddr
	IPs      []netip.Prefix // addresses with their subnet length
	Gateways []netip.Addr
	MTU      int
	// NoDefaultRoute: the interface does not carry the pod's default route (an attachment
	// network's, unless its default_route annotation says so).
	NoDefaultRoute bool
	// Routes are the interface's routes annotation.
	Routes []podnet.Route
}

// Pods yields pod allocations.
type Pods interface {
	// WaitPodNetwork blocks, on events rather than polling, until the pod's network is
	// allocated or ctx ends.
	WaitPodNetwork(ctx context.Context, k PodKey) (PodNetwork, error)
}

// PortRequest describes an OVS port on br-int for a pod's host interface.
type PortRequest struct {
	Name        string // host interface name
	IfaceID     string // logical switch port name
	ExternalIDs map[string]string
	// QoS is the QoS row type a new port is created with ("": none), from Shaper.PortQoS.
	QoS string
}

// Ports manages edgeovn's pod ports on the local br-int.
type Ports interface {
	AddPort(ctx context.Context, r PortRequest) error
	DeletePort(ctx context.Context, name string) error
	WaitInstalled(ctx context.Context, name string) error // OVN bound the port (ovn-installed)
	ListPorts(ctx context.Context) ([]PortRequest, error) // edgeovn's pod ports, for GC
}

// PodHostPorts is one pod's hostPorts as an ADD asks for them: the runtime's mappings,
// unchecked, and the pod's addresses with their subnet length.
type PodHostPorts struct {
	ContainerID string
	IPs         []netip.Prefix
	Mappings    []protocol.PortMapping
}

// HostPorts serves the pods' hostPorts on this host (the "portMappings" capability).
type HostPorts interface {
	// Check validates p before anything is wired for it and renders its record for the
	// pod port's external_ids ("" when it has no mappings). An error wrapping
	// ErrInvalidPortMappings is bad input (a mapping that cannot be, the same host port
	// twice, one another pod holds); Check changes nothing.
	Check(p PodHostPorts) (record string, err error)
	// Add serves p's mappings; on error it changes nothing.
	Add(ctx context.Context, p PodHostPorts) error
	// Delete stops serving the container's host ports; none is a no-op.
	Delete(ctx context.Context, containerID string) error
}

// ShapeRequest names a pod's freshly wired primary interface for its Shaper.
type ShapeRequest struct {
	Namespace, Name string
	Port            string // the host end, also the OVS port's name
	Netns, IfName   string // the pod's end
}

// Shaper applies a pod's bandwidth limits (its QoS annotations) to its interface before ADD
// answers. An error fails the ADD; bad annotations are the Shaper's to report, not an error.
type Shaper interface {
	// PortQoS is the QoS row the pod's port is to be created with ("": none).
	PortQoS(r ShapeRequest) string
	ShapePort(ctx context.Context, r ShapeRequest) error
}

// ErrInvalidPortMappings marks a HostPorts error caused by the request's mappings.
var ErrInvalidPortMappings = errors.New("invalid port mappings")

// external_ids keys ADD sets on pod ports, next to iface-id. The names follow Kube-OVN's
// where Kube-OVN has one.
const (
	ExtIDPodNamespace = "pod_namespace"
	ExtIDPodName      = "pod_name"
	ExtIDPodUID       = "pod_uid"
	ExtIDContainerID  = "container_id"
	ExtIDPodNetns     = "pod_netns"
	ExtIDIfName       = "ifname"
	ExtIDIP           = "ip"
	// ExtIDHostPorts is the pod's host ports record (HostPorts.Check), read back at start.
	ExtIDHostPorts = "host_ports"
)

// Config configures a Server.
type Config struct {
	Socket string // default protocol.DefaultSocket
	Pods   Pods
	Ports  Ports
	// HostPorts serves hostPorts; nil: an ADD that asks for any is refused.
	HostPorts HostPorts
	// Shaper applies the pod's QoS annotations to its primary interface; nil: none.
	Shaper Shaper
	// Ready reports whether the node's datapath is up (CNI STATUS); nil means always ready.
	Ready func(ctx context.Context) error
	// AddReady is the same question before an ADD, which may take a recent answer; nil: Ready.
	AddReady func(ctx context.Context) error
	// AddStarted is called as each ADD begins, before anything else; it must not block. Nil:
	// nothing is.
	AddStarted        func()
	DisableTxChecksum bool          // see podnet.SetupRequest.DisableTxChecksum
	Timeout           time.Duration // per ADD, default DefaultTimeout
	ReadTimeout       time.Duration // to receive one whole request, default DefaultReadTimeout
	IdleTimeout       time.Duration // an idle connection is closed after it, default DefaultIdleTimeout
	Log               *slog.Logger  // default discards
	// Listening, if set, is called once the socket accepts connections: the moment the
	// runtime may be pointed at it (the CNI config written).
	Listening func()
	// Listener, if set, is the socket at Socket already listening, passed by systemd
	// (edgeovn.socket): Serve serves it instead of creating the socket, and leaves it bound
	// when it stops, so connections made meanwhile wait in the kernel's queue for the next
	// daemon instead of failing.
	Listener net.Listener
	// DrainTimeout is how long requests in flight when Serve's context ends may still
	// finish; the rest are abandoned without an answer (the plugin then retries them against
	// the next daemon). Default DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Observer, if set, receives every request's outcome (metrics).
	Observer Observer
	// SubnetProviders, if set, lets an IPAM ADD whose provider no Subnet has fail at once
	// rather than wait for an allocation nobody makes.
	SubnetProviders SubnetProviders
}

// Observer receives the outcome of each request: its verb (ADD, DEL, ...), the CNI error code
// it answered with (0: success) and how long it took.
type Observer interface {
	ObserveCNI(verb string, code uint, took time.Duration)
}

// ErrInvalidConfig is returned by New for a Config it cannot run with.
var ErrInvalidConfig = errors.New("invalid cni server config")

func (c Config) withDefaults() (Config, error) {
	if c.Pods == nil || c.Ports == nil {
		return c, fmt.Errorf("%w: pods and ports are required", ErrInvalidConfig)
	}
	if c.Timeout < 0 || c.ReadTimeout < 0 || c.IdleTimeout < 0 || c.DrainTimeout < 0 {
		return c, fmt.Errorf("%w: timeouts %v, %v, %v, %v: none may be negative", ErrInvalidConfig, c.Timeout, c.ReadTimeout, c.IdleTimeout, c.DrainTimeout)
	}
	if c.Socket == "" {
		c.Socket = protocol.DefaultSocket
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Ready == nil {
		c.Ready = func(context.Context) error { return nil }
	}
	if c.AddReady == nil {
		c.AddReady = c.Ready
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
