package annotation

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// IPPool is Kube-OVN's ip_pool annotation: addresses a pod (usually every pod of a workload,
// through its template) may take one of.
const IPPool = "ovn.kubernetes.io/ip_pool"

// Pool is a parsed ip_pool annotation: either Entries, each an address, or one address per
// family of a dual-stack subnet, in the annotation's order; or Name, the name of a Kube-OVN
// IPPool object (which edgeovn does not implement: the controller says so).
type Pool struct {
	Entries [][]netip.Addr
	Name    string
	// Value is the annotation as written, for messages.
	Value string
}

// Empty says the pod carries no ip_pool.
func (p Pool) Empty() bool { return len(p.Entries) == 0 && p.Name == "" }

// poolName is a Kubernetes object name (DNS-1123 subdomain) that cannot be mistaken for an
// address: it has a letter, and no ':'.
var poolName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// ParsePool reads an ip_pool value in Kube-OVN's forms:
//   - "10.16.0.15,10.16.0.16,10.16.0.17": one address per entry, comma-separated;
//   - "10.16.0.15,fd00:10:16::f;10.16.0.16,fd00:10:16::10": entries separated by ';', each
//     one address per family, comma-separated;
//   - "10.16.0.15,fd00:10:16::f": two addresses of different families are one dual-stack
//     entry (as Kube-OVN reads them);
//   - "my-pool": the name of an IPPool object.
func ParsePool(v string) (Pool, error) {
	p := Pool{Value: v}
	v = strings.TrimSpace(v)
	if v == "" {
		return Pool{}, fmt.Errorf("annotation %s: empty", IPPool)
	}
	if strings.ContainsRune(v, ';') {
		for _, e := range strings.Split(v, ";") {
			entry, err := parseEntry(v, e)
			if err != nil {
				return Pool{}, err
			}
			p.Entries = append(p.Entries, entry)
		}
		return p, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) == 1 && !strings.Contains(v, ":") && strings.ContainsAny(v, "abcdefghijklmnopqrstuvwxyz") {
		if !poolName.MatchString(v) || len(v) > 253 {
			return Pool{}, fmt.Errorf("annotation %s %q: neither addresses nor an IPPool name", IPPool, v)
		}
		p.Name = v
		return p, nil
	}
	if len(parts) == 2 {
		if entry, err := parseEntry(v, v); err == nil && len(entry) == 2 {
			p.Entries = [][]netip.Addr{entry}
			return p, nil
		}
	}
	for _, part := range parts {
		a, err := parsePoolAddr(v, part)
		if err != nil {
			return Pool{}, err
		}
		p.Entries = append(p.Entries, []netip.Addr{a})
	}
	return p, nil
}

// parseEntry reads one ';'-separated entry: one address, or one per family.
func parseEntry(whole, e string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, f := range strings.Split(e, ",") {
		a, err := parsePoolAddr(whole, f)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) > 2 || len(out) == 2 && out[0].Is4() == out[1].Is4() {
		return nil, fmt.Errorf("annotation %s %q: entry %q: at most one address per family", IPPool, whole, strings.TrimSpace(e))
	}
	if len(out) == 2 && out[0].Is6() {
		out[0], out[1] = out[1], out[0]
	}
	return out, nil
}

func parsePoolAddr(whole, s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Addr{}, fmt.Errorf("annotation %s %q: empty entry", IPPool, whole)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("annotation %s %q: %q is not an IP address", IPPool, whole, s)
	}
	if a.Zone() != "" || a.Is4In6() {
		return netip.Addr{}, fmt.Errorf("annotation %s %q: %q is not a plain IPv4 or IPv6 address", IPPool, whole, s)
	}
	return a, nil
}

// Addrs returns every address of the pool's entries.
func (p Pool) Addrs() []netip.Addr {
	var out []netip.Addr
	for _, e := range p.Entries {
		out = append(out, e...)
	}
	return out
}
