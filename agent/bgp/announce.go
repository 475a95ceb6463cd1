package bgp

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// Annotation is Kube-OVN's key on Subnets, pods and Services that asks for an announcement.
const Annotation = "ovn.kubernetes.io/bgp"

// Kube-OVN's values of Annotation ("true" is "cluster").
const (
	PolicyTrue    = "true"
	PolicyCluster = "cluster"
	PolicyLocal   = "local"
)

// Subnet is what the announcement needs of a kubeovn.io/v1 Subnet.
type Subnet struct {
	Name   string
	CIDRs  []netip.Prefix
	Policy string // the annotation's value; "": not announced
}

// Pod is what the announcement needs of a pod of this host.
type Pod struct {
	Namespace, Name string
	Switch          string // its logical switch (Subnet) name
	IPs             []netip.Addr
	Policy          string
}

// Service is what the announcement needs of a Service.
type Service struct {
	Namespace, Name string
	ClusterIPs      []netip.Addr
	Policy          string
}

// State is everything this host's announcement is made from.
type State struct {
	Subnets  []Subnet
	Pods     []Pod // only this host's
	Services []Service
	// ClusterIPs: announce-cluster-ip.
	ClusterIPs bool
}

// BadValue is an annotation whose value is none of Kube-OVN's: that object alone is not
// announced, and it is reported.
type BadValue struct {
	Kind, Namespace, Name, Value string
}

func (b BadValue) Error() string {
	name := b.Name
	if b.Namespace != "" {
		name = b.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s: annotation %s=%q: want %q, %q or %q", b.Kind, name, Annotation, b.Value, PolicyTrue, PolicyCluster, PolicyLocal)
}

// Announcements is what this host announces (Kube-OVN's rules, each node for itself):
//   - a Subnet "true"/"cluster": its CIDRs (every host can forward to it over the overlay),
//     and, unlike Kube-OVN, the host routes of this host's pods in it, so that the site
//     router sends each pod's traffic to the pod's own host: a reply leaves OVN through the
//     pod's host, and a flow that entered through another host is dropped by OVN's
//     conntrack there (an echo reply or SYN-ACK it never saw the request of, ct.inv);
//   - a Subnet "local": the addresses of this host's pods in it, one host route each;
//   - a pod "true"/"cluster"/"local": its addresses, from its own host only;
//   - a Service "true"/"cluster"/"local", with ClusterIPs: its ClusterIPs.
//
// The result is sorted and has no duplicates; bad lists the annotations it ignored.
func Announcements(s State) (prefixes []netip.Prefix, bad []BadValue) {
	set := map[netip.Prefix]bool{}
	local := map[string]bool{}
	for _, sn := range s.Subnets {
		switch sn.Policy {
		case "":
		case PolicyTrue, PolicyCluster:
			for _, p := range sn.CIDRs {
				set[p.Masked()] = true
			}
			local[sn.Name] = true
		case PolicyLocal:
			local[sn.Name] = true
		default:
			bad = append(bad, BadValue{Kind: "Subnet", Name: sn.Name, Value: sn.Policy})
		}
	}
	for _, p := range s.Pods {
		switch p.Policy {
		case "":
			if !local[p.Switch] {
				continue
			}
		case PolicyTrue, PolicyCluster, PolicyLocal:
		default:
			bad = append(bad, BadValue{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, Value: p.Policy})
			continue
		}
		for _, ip := range p.IPs {
			set[netip.PrefixFrom(ip, ip.BitLen())] = true
		}
	}
	for _, svc := range s.Services {
		switch svc.Policy {
		case "":
			continue
		case PolicyTrue, PolicyCluster, PolicyLocal:
		default:
			bad = append(bad, BadValue{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, Value: svc.Policy})
			continue
		}
		if !s.ClusterIPs {
			continue
		}
		for _, ip := range svc.ClusterIPs {
			set[netip.PrefixFrom(ip, ip.BitLen())] = true
		}
	}
	for p := range set {
		prefixes = append(prefixes, p)
	}
	slices.SortFunc(prefixes, speakerproto.ComparePrefix)
	return prefixes, bad
}
