package hostnet

import (
	"fmt"
	"net/netip"
	"strings"
)

// NodePort is one Service port served on the host's own addresses without kube-proxy.
// With ClusterIP alone (externalTrafficPolicy Cluster) the connection is sent to the
// Service's virtual IP through ovn0 with the host's join address as its source, and OVN's
// load balancer on the join switch picks a backend; with Local (externalTrafficPolicy Local,
// or Cluster when every endpoint is the host itself) it goes straight to one of these
// endpoints and keeps the client's address. LocalOnly with no endpoints serves nothing.
type NodePort struct {
	Protocol  string // "tcp", "udp" or "sctp"
	Port      uint16 // the node port
	ClusterIP netip.AddrPort
	Local     []netip.AddrPort
	LocalOnly bool // externalTrafficPolicy: Local
	// IPv6 says the family served: the port on the host's IPv6 addresses ("ip6 edgeovn-svc"),
	// ClusterIP and Local IPv6; a dual-stack Service has one NodePort per family.
	IPv6 bool
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
		case !np.LocalOnly && !ofFamily(np.ClusterIP, np.IPv6):
			return invalid("%s: cluster IP %s is not an %s address and port", what, np.ClusterIP, familyName(np.IPv6))
		}
		for _, ep := range np.Local {
			if !ofFamily(ep, np.IPv6) {
				return invalid("%s: endpoint %s is not an %s address and port", what, ep, familyName(np.IPv6))
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

// ofFamily reports whether ap is a valid address and port of the family (IPv6 when v6; an
// IPv4-mapped IPv6 address is neither).
func ofFamily(ap netip.AddrPort, v6 bool) bool {
	a := ap.Addr()
	return ap.IsValid() && !a.Is4In6() && a.Is6() == v6
}

func familyName(v6 bool) string {
	if v6 {
		return "IPv6"
	}
	return "IPv4"
}

// describe is the rule's identity, stored in its user data: the table is rewritten only
// when the list of descriptions differs from what the kernel holds.
func (np NodePort) describe() string {
	if np.LocalOnly || len(np.Local) > 0 {
		eps := make([]string, len(np.Local))
		for i, ep := range np.Local {
			eps[i] = ep.String()
		}
		kind := "local"
		if !np.LocalOnly {
			kind = "host"
		}
		return fmt.Sprintf("nodeport %s %d %s %s", np.Protocol, np.Port, kind, strings.Join(eps, ","))
	}
	return fmt.Sprintf("nodeport %s %d cluster %s", np.Protocol, np.Port, np.ClusterIP)
}
