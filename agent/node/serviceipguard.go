package node

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// errServiceIP is what every refused service address wraps; errHostListener also what a
// refusal for a host listener's port wraps (the one refusal only this node can make: the
// controller refuses the others for the whole cluster and records their Events).
var (
	errServiceIP    = errors.New("not served")
	errHostListener = fmt.Errorf("held by a listener on the host: %w", errServiceIP)
)

// namedPrefix is a network an external or LoadBalancer IP may not be in.
type namedPrefix struct {
	name   string
	prefix netip.Prefix
}

// ipGuard refuses external and LoadBalancer IPs that would take traffic from something else:
// an address in the pod, join or service network (its DNAT would capture traffic to pods or
// ClusterIPs), and one of the host's own addresses on a port a host listener holds (sshd on
// 22: the DNAT would cut the host's own service off).
type ipGuard struct {
	reserved  []namedPrefix
	hostAddrs map[netip.Addr]bool
	listening map[string]map[netip.AddrPort]bool // "tcp"/"udp" -> bound addresses; 0.0.0.0 is any
	// readListening fills listening the first time a Service IP is one of the host's own
	// addresses: reading /proc's socket tables at every pass of the loop was half of an idle
	// node's CPU. nil: listening is given.
	readListening func() (map[string]map[netip.AddrPort]bool, error)
}

// refuse is serviceIPsRequest.Refuse.
func (g *ipGuard) refuse(ip netip.Addr, ports []corev1.ServicePort) error {
	switch {
	case ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsLinkLocalUnicast():
		return fmt.Errorf("a loopback, unspecified, multicast or link-local address: %w", errServiceIP)
	}
	for _, r := range g.reserved {
		if r.prefix.Contains(ip) {
			return fmt.Errorf("inside the %s %s: %w", r.name, r.prefix, errServiceIP)
		}
	}
	if !g.hostAddrs[ip] {
		return nil
	}
	if g.readListening != nil {
		l, err := g.readListening()
		if err != nil {
			return err
		}
		g.listening, g.readListening = l, nil
	}
	for _, p := range ports {
		proto := portProtocol(p)
		bound := g.listening[proto]
		for _, a := range []netip.AddrPort{netip.AddrPortFrom(ip, uint16(p.Port)), netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(p.Port))} {
			if bound[a] {
				return fmt.Errorf("this host's own address, and %s port %d is taken (%s): %w", proto, p.Port, a, errHostListener)
			}
		}
	}
	return nil
}

// procListeners reads the sockets bound on this network namespace from /proc: TCP sockets in
// LISTEN, UDP sockets not connected. IPv6 wildcard sockets (which take IPv4 too unless
// v6only) count as 0.0.0.0, v4-mapped ones as their IPv4 address.
func procListeners() (map[string]map[netip.AddrPort]bool, error) {
	out := map[string]map[netip.AddrPort]bool{"tcp": {}, "udp": {}}
	for _, f := range []struct{ proto, file, state string }{
		{"tcp", "tcp", "0A"}, {"tcp", "tcp6", "0A"}, {"udp", "udp", "07"}, {"udp", "udp6", "07"},
	} {
		b, err := os.ReadFile("/proc/thread-self/net/" + f.file)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("read listening sockets: %w", err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != f.state {
				continue
			}
			if a, ok := parseProcAddr(fields[1]); ok {
				out[f.proto][a] = true
			}
		}
	}
	return out, nil
}

// littleEndian: /proc writes the words in the host's order.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// parseProcAddr reads /proc/net/{tcp,udp}{,6}'s "HEXADDR:HEXPORT": the address as 32-bit
// words in host (little-endian) order.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	h, ps, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(ps, 16, 16)
	if !ok || err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; littleEndian && i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	a, _ := netip.AddrFromSlice(raw)
	switch {
	case a.Is6() && a.IsUnspecified():
		a = netip.IPv4Unspecified()
	case a.Is4In6():
		a = a.Unmap()
	case a.Is6():
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, uint16(port)), true
}
