package multus

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Annotation keys Multus reads on a pod.
const (
	NetworksAnnotation       = "k8s.v1.cni.cncf.io/networks"
	DefaultNetworkAnnotation = "v1.multus-cni.io/default-network"
)

// Selection is one network a pod selects.
type Selection struct {
	Namespace, Name string
	// Interface is the pod's interface on it: the one asked for, else Multus's "net<N>".
	Interface string
	IPs       []netip.Addr
	MAC       net.HardwareAddr
}

// Key is "namespace/name" of the selected NetworkAttachmentDefinition.
func (s Selection) Key() string { return s.Namespace + "/" + s.Name }

// jsonSelection is Multus's NetworkSelectionElement, the fields edgeovn reads.
type jsonSelection struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Interface string   `json:"interface"`
	IPs       []string `json:"ips"`
	MAC       string   `json:"mac"`
}

// ParseSelection reads a networks annotation; namespace is the pod's, the default for entries
// that name none.
func ParseSelection(value, namespace string) ([]Selection, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	var raw []jsonSelection
	if strings.HasPrefix(value, "[") {
		if err := json.Unmarshal([]byte(value), &raw); err != nil {
			return nil, fmt.Errorf("annotation %s: malformed JSON: %w", NetworksAnnotation, err)
		}
	} else {
		for _, f := range strings.Split(value, ",") {
			e, err := parseShort(strings.TrimSpace(f))
			if err != nil {
				return nil, err
			}
			raw = append(raw, e)
		}
	}
	out := make([]Selection, 0, len(raw))
	for i, e := range raw {
		s, err := e.selection(namespace, i+1)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// parseShort reads "name", "ns/name", "name@iface" or "ns/name@iface".
func parseShort(f string) (jsonSelection, error) {
	var e jsonSelection
	rest, iface, hasIface := strings.Cut(f, "@")
	if hasIface {
		e.Interface = iface
	}
	if ns, name, ok := strings.Cut(rest, "/"); ok {
		e.Namespace, e.Name = ns, name
	} else {
		e.Name = rest
	}
	if e.Name == "" || hasIface && iface == "" || strings.ContainsAny(e.Name, "/@") {
		return e, fmt.Errorf("annotation %s: entry %q: want name, namespace/name or name@interface", NetworksAnnotation, f)
	}
	return e, nil
}

func (e jsonSelection) selection(namespace string, pos int) (Selection, error) {
	s := Selection{Namespace: e.Namespace, Name: e.Name, Interface: e.Interface}
	if e.Name == "" {
		return s, fmt.Errorf("annotation %s: entry %d has no name", NetworksAnnotation, pos)
	}
	if s.Namespace == "" {
		s.Namespace = namespace
	}
	if s.Interface == "" {
		s.Interface = fmt.Sprintf("net%d", pos) // Multus's name for the pos'th network
	}
	if len(s.Interface) > 15 || strings.ContainsAny(s.Interface, "/ \t") {
		return s, fmt.Errorf("attachment %s: interface %q is not a Linux interface name", s.Key(), s.Interface)
	}
	for _, v := range e.IPs {
		ip, err := parseIP(v)
		if err != nil {
			return s, fmt.Errorf("attachment %s: ips: %w", s.Key(), err)
		}
		s.IPs = append(s.IPs, ip)
	}
	if e.MAC != "" {
		mac, err := net.ParseMAC(e.MAC)
		if err != nil {
			return s, fmt.Errorf("attachment %s: mac %q: %w", s.Key(), e.MAC, err)
		}
		s.MAC = mac
	}
	return s, nil
}

// parseIP reads an address of Multus's ips, with ("10.1.1.5/24") or without a length.
func parseIP(v string) (netip.Addr, error) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Addr(), nil
	}
	ip, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q: %w", v, err)
	}
	return ip, nil
}
