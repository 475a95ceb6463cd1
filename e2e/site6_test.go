package e2e

import "net/netip"

// The site's IPv6, shared by the underlay and BGP tests: the site router at 2001:db8:51::1 on
// the hosts' untagged LAN (the hosts at ::11, ::12, ...) and at 2001:db8:2::1 on VLAN 100 (the
// underlay) or behind the router (BGP), the site device at 2001:db8:2::200.
var (
	siteLAN6    = netip.MustParsePrefix("2001:db8:51::1/64")
	siteGW6     = netip.MustParsePrefix("2001:db8:2::1/64")
	siteDevice6 = netip.MustParsePrefix("2001:db8:2::200/64")
)
