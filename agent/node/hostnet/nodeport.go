package hostnet

import (
	"fmt"
	"net/netip"
	"strings"
)

// NodePort is one Service port served on the host's own addresses without kube-proxy.
// Exactly one of ClusterIP and Local is used: with ClusterIP (externalTrafficPolicy Cluster)
// the connection is sent to the Service's virtual IP through ovn0 with the host's join
// address as its source, and OVN's load balancer on the join switch picks a backend; with
// Local (externalTrafficPolicy Local) it goes straight to one of this host's endpoints and
// keeps the client's address. Local with no endpoints serves nothing.
type NodePort struct {
	Protocol  string // "tcp", "udp" or "sctp"
	Port      uint16 // the node port
	ClusterIP netip.AddrPort
	Local     []netip.AddrPort
	LocalOnly bool // externalTrafficPolicy: Local
}

// ServiceSpec is the host's part of serving Services itself (kube-proxy absent).
type ServiceSpec struct {
	Interface string // ovn0: NodePort traffic to a ClusterIP leaves by it, masqueraded
	NodePorts []NodePort
	// ServiceIPs are the external and LoadBalancer IPs' ports.
	ServiceIPs []ServiceIP
}

// Validate reports the first thing wrong, naming the port.
func (s ServiceSpec) Validate() error {
	if err := validateName("interface", s.Interface); err != nil {
		return err
	}
	for _, np := range s.NodePorts {
		what := fmt.Sprintf("node port %s/%d", np.Protocol, np.Port)
		switch {
		case np.Protocol != "tcp" && np.Protocol != "udp" && np.Protocol != "sctp":
			return invalid("%s: protocol must be tcp, udp or sctp", what)
		case np.Port == 0:
			return invalid("%s: port 0", what)
		case !np.LocalOnly && (!np.ClusterIP.IsValid() || !np.ClusterIP.Addr().Is4()):
			return invalid("%s: cluster IP %s is not an IPv4 address and port", what, np.ClusterIP)
		}
		for _, ep := range np.Local {
			if !ep.IsValid() || !ep.Addr().Is4() {
				return invalid("%s: endpoint %s is not an IPv4 address and port", what, ep)
			}
		}
	}
	for _, sip := range s.ServiceIPs {
		if err := sip.validate(); err != nil {
			return err
		}
	}
	return nil
}

// describe is the rule's identity, stored in its user data: the table is rewritten only
// when the list of descriptions differs from what the kernel holds.
func (np NodePort) describe() string {
	if np.LocalOnly {
		eps := make([]string, len(np.Local))
		for i, ep := range np.Local {
			eps[i] = ep.String()
		}
		return fmt.Sprintf("nodeport %s %d local %s", np.Protocol, np.Port, strings.Join(eps, ","))
	}
	return fmt.Sprintf("nodeport %s %d cluster %s", np.Protocol, np.Port, np.ClusterIP)
}
