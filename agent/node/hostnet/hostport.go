package hostnet

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// PortMapping is one hostPort of a pod, as the runtime passes it in the CNI "portMappings"
// capability: connections to HostPort on the host's addresses (or on HostIP alone, when
// set) go to ContainerPort on the pod.
type PortMapping struct {
	HostPort      uint16     `json:"hostPort"`
	ContainerPort uint16     `json:"containerPort"`
	Protocol      string     `json:"protocol"` // "tcp", "udp" or "sctp"
	HostIP        netip.Addr `json:"hostIP,omitzero"`
}

// PodPorts is one pod's host ports: what the node serves for it and records on its OVS port.
type PodPorts struct {
	ContainerID string         `json:"-"`
	IPs         []netip.Prefix `json:"ips"` // the pod's addresses with their subnet length
	Mappings    []PortMapping  `json:"mappings"`
}

// key identifies a host port on the host: two mappings with the same key cannot both work.
type portKey struct {
	protocol string
	hostIP   netip.Addr // the zero Addr: every address
	hostPort uint16
}

func (m PortMapping) key() portKey {
	ip := m.HostIP
	if ip.IsValid() && ip.IsUnspecified() {
		ip = netip.Addr{}
	}
	return portKey{protocol: m.Protocol, hostIP: ip, hostPort: m.HostPort}
}

// describe names the mapping in messages: "tcp 0.0.0.0:18080 -> 8080".
func (m PortMapping) describe() string {
	host := "*"
	if m.HostIP.IsValid() {
		host = m.HostIP.String()
	}
	return fmt.Sprintf("hostPort %s %s:%d -> containerPort %d", m.Protocol, host, m.HostPort, m.ContainerPort)
}

// ParsePortMapping checks one mapping as the runtime sends it (numbers as ints, protocol in
// any case, hostIP as text, empty for every address) and returns it in canonical form. The
// error names the mapping and what is wrong with it.
func ParsePortMapping(hostPort, containerPort int, protocol, hostIP string) (PortMapping, error) {
	what := fmt.Sprintf("port mapping %s hostPort %d containerPort %d", protocol, hostPort, containerPort)
	if hostIP != "" {
		what += " hostIP " + hostIP
	}
	m := PortMapping{Protocol: strings.ToLower(protocol)}
	if m.Protocol == "" {
		m.Protocol = "tcp" // the CRI's default, as Kubernetes defaults a ContainerPort's protocol
	}
	if _, ok := l4proto[m.Protocol]; !ok {
		return PortMapping{}, invalid("%s: protocol must be tcp, udp or sctp", what)
	}
	if hostPort < 1 || hostPort > 65535 {
		return PortMapping{}, invalid("%s: hostPort must be 1-65535", what)
	}
	if containerPort < 1 || containerPort > 65535 {
		return PortMapping{}, invalid("%s: containerPort must be 1-65535", what)
	}
	m.HostPort, m.ContainerPort = uint16(hostPort), uint16(containerPort)
	if hostIP != "" {
		ip, err := netip.ParseAddr(hostIP)
		if err != nil || ip.Zone() != "" {
			return PortMapping{}, invalid("%s: hostIP is not an IP address", what)
		}
		m.HostIP = ip.Unmap()
	}
	return m, nil
}

// Validate checks a pod's host ports on their own: a container ID, an address of the pod,
// and no host port twice.
func (p PodPorts) Validate() error {
	if p.ContainerID == "" {
		return invalid("host ports without a container ID")
	}
	if len(p.Mappings) > 0 && len(p.IPs) == 0 {
		return invalid("host ports of container %s: the pod has no address", p.ContainerID)
	}
	seen := map[portKey]PortMapping{}
	for _, m := range p.Mappings {
		if _, ok := l4proto[m.Protocol]; !ok || m.HostPort == 0 || m.ContainerPort == 0 {
			return invalid("host ports of container %s: %s is not a valid mapping", p.ContainerID, m.describe())
		}
		if prev, dup := seen[m.key()]; dup {
			return invalid("host ports of container %s: %s and %s take the same host port", p.ContainerID, prev.describe(), m.describe())
		}
		seen[m.key()] = m
	}
	return nil
}

// conflict reports a mapping of p whose host port another pod's mapping already takes.
func conflict(p PodPorts, others map[string]PodPorts) error {
	taken := map[portKey]string{}
	for cid, o := range others {
		if cid == p.ContainerID {
			continue
		}
		for _, m := range o.Mappings {
			taken[m.key()] = cid
		}
	}
	for _, m := range p.Mappings {
		if cid, ok := taken[m.key()]; ok {
			return invalid("host ports of container %s: %s is already mapped to container %s", p.ContainerID, m.describe(), cid)
		}
	}
	return nil
}

// RecordHostPorts renders a pod's host ports for its record (the OVS port's external_ids);
// "" for a pod without any.
func RecordHostPorts(p PodPorts) (string, error) {
	if len(p.Mappings) == 0 {
		return "", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("render host ports of container %s: %w", p.ContainerID, err)
	}
	return string(b), nil
}

// ParseHostPortsRecord reads back what RecordHostPorts wrote for a container.
func ParseHostPortsRecord(containerID, record string) (PodPorts, error) {
	p := PodPorts{}
	if err := json.Unmarshal([]byte(record), &p); err != nil {
		return PodPorts{}, fmt.Errorf("%w: host ports record of container %s: %w", ErrInvalid, containerID, err)
	}
	p.ContainerID = containerID
	if err := p.Validate(); err != nil {
		return PodPorts{}, err
	}
	return p, nil
}

// sortedPods lists the pods with mappings in a stable order (container ID), so that the table
// rendered from them, and its descriptions, do not depend on map order.
func sortedPods(pods map[string]PodPorts) []PodPorts {
	out := make([]PodPorts, 0, len(pods))
	for _, p := range pods {
		if len(p.Mappings) > 0 {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b PodPorts) int { return strings.Compare(a.ContainerID, b.ContainerID) })
	return out
}
