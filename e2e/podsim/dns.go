package podsim

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Lookup resolves name from inside the namespace at netns by asking server only (port 53 when
// its port is 0), over UDP and TCP as Go's resolver does, and returns the IPv4 and IPv6
// addresses. The name is taken as fully qualified: no search domains are tried. A name the
// server does not know fails with a *net.DNSError whose IsNotFound is true.
func Lookup(ctx context.Context, netns string, server netip.AddrPort, name string) ([]netip.Addr, error) {
	if server.Port() == 0 {
		server = netip.AddrPortFrom(server.Addr(), 53)
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialIn(ctx, netns, network, server.String())
	}}
	fqdn := name
	if !strings.HasSuffix(fqdn, ".") {
		fqdn += "."
	}
	addrs, err := r.LookupNetIP(ctx, "ip", fqdn)
	if err != nil {
		return nil, fmt.Errorf("look up %s at %s from %s: %w", name, server, netns, err)
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}
