package config

import (
	"flag"
	"fmt"
	"net/netip"
	"time"
)

// BGP are the node role's BGP speaker options, named as kube-ovn-speaker's flags. With no
// neighbour the speaker does not start and nothing of it is watched or kept (Enabled).
type BGP struct {
	// NeighborAddresses and NeighborIPv6Addresses are the site routers the speaker peers
	// with (--neighbor-address, --neighbor-ipv6-address: repeat or comma-separate).
	NeighborAddresses     []netip.Addr
	NeighborIPv6Addresses []netip.Addr
	// NeighborAS is the routers' AS, ClusterAS this host's (Kube-OVN: 65001 and 65000).
	NeighborAS uint32
	ClusterAS  uint32
	// RouterID is the speaker's BGP identifier (IPv4); invalid: the IPv4 source address
	// this host uses toward its first IPv4 neighbour, or, with IPv6 neighbours only, the
	// host's tunnel endpoint (its own IPv4 address, as Kube-OVN takes the node's).
	RouterID netip.Addr
	// AnnounceClusterIP announces the ClusterIPs of Services annotated ovn.kubernetes.io/bgp.
	AnnounceClusterIP bool
	// AuthPassword is the TCP MD5 (RFC 2385) password of every session; empty: none.
	AuthPassword string
	// HoldTime is the BGP hold time offered to the peers (3 s .. 65535 s, Kube-OVN: 90 s).
	HoldTime time.Duration
	// GracefulRestart advertises RFC 4724 graceful restart: a stopping edgeovn leaves its
	// routes at the peers for GracefulRestartTime instead of withdrawing them.
	GracefulRestart     bool
	GracefulRestartTime time.Duration
	// PassiveMode waits for the peers to connect.
	PassiveMode bool
	// EBGPMultihop is the TTL of eBGP sessions (1: directly connected peers).
	EBGPMultihop int
}

// Enabled says whether the speaker runs: some neighbour is configured.
func (b BGP) Enabled() bool { return len(b.NeighborAddresses)+len(b.NeighborIPv6Addresses) > 0 }

// Neighbors are every configured neighbour, IPv4 first.
func (b BGP) Neighbors() []netip.Addr {
	return append(append([]netip.Addr(nil), b.NeighborAddresses...), b.NeighborIPv6Addresses...)
}

// defaultBGP: Kube-OVN's speaker defaults.
func defaultBGP() BGP {
	return BGP{NeighborAS: 65001, ClusterAS: 65000, HoldTime: 90 * time.Second,
		GracefulRestartTime: 90 * time.Second, EBGPMultihop: 1}
}

func (c *Config) addBGPFlags(fs *flag.FlagSet) {
	b := &c.BGP
	fs.Var(&addrListFlag{l: &b.NeighborAddresses, accept: neighborFamily(false)}, "neighbor-address", "BGP: IPv4 address of a site router to peer with (repeat or comma-separate; none: no speaker)")
	fs.Var(&addrListFlag{l: &b.NeighborIPv6Addresses, accept: neighborFamily(true)}, "neighbor-ipv6-address", "BGP: IPv6 address of a site router to peer with (repeat or comma-separate)")
	fs.Var(asFlag{&b.NeighborAS}, "neighbor-as", "BGP: the site routers' AS number")
	fs.Var(asFlag{&b.ClusterAS}, "cluster-as", "BGP: this cluster's AS number")
	fs.Var(addrFlag{&b.RouterID}, "router-id", "BGP: router id (default: this host's IPv4 address toward the first IPv4 neighbour, else its encapsulation address)")
	fs.BoolVar(&b.AnnounceClusterIP, "announce-cluster-ip", b.AnnounceClusterIP, "BGP: announce the ClusterIPs of Services annotated ovn.kubernetes.io/bgp")
	fs.StringVar(&b.AuthPassword, "auth-password", b.AuthPassword, "BGP: TCP MD5 password of the sessions")
	fs.DurationVar(&b.HoldTime, "holdtime", b.HoldTime, "BGP: hold time (3s..65535s)")
	fs.BoolVar(&b.GracefulRestart, "graceful-restart", b.GracefulRestart, "BGP: graceful restart (a stopping edgeovn leaves its routes at the peers for graceful-restart-time)")
	fs.DurationVar(&b.GracefulRestartTime, "graceful-restart-time", b.GracefulRestartTime, "BGP: restart time advertised with graceful restart (1s..4095s)")
	fs.BoolVar(&b.PassiveMode, "passivemode", b.PassiveMode, "BGP: wait for the peers to connect")
	fs.IntVar(&b.EBGPMultihop, "ebgp-multihop", b.EBGPMultihop, "BGP: TTL of eBGP sessions (1..255)")
}

// validateBGP checks the speaker's options; without a neighbour they are not used, and
// only the numbers are checked.
func (c *Config) validateBGP() []error {
	b := c.BGP
	var errs []error
	for _, n := range b.Neighbors() {
		flag := "neighbor-address"
		if n.Is6() {
			flag = "neighbor-ipv6-address"
		}
		if n.IsUnspecified() || n.IsMulticast() || n.IsLoopback() {
			errs = append(errs, fmt.Errorf("%s %s: not a router's address (loopback, unspecified or multicast)", flag, n))
		}
	}
	for _, as := range []struct {
		flag string
		n    uint32
	}{{"neighbor-as", b.NeighborAS}, {"cluster-as", b.ClusterAS}} {
		if as.n == 0 {
			errs = append(errs, fmt.Errorf("%s %d: outside 1..4294967295", as.flag, as.n))
		}
	}
	if b.RouterID.IsValid() && !b.RouterID.Is4() {
		errs = append(errs, fmt.Errorf("router-id %s: a BGP identifier is an IPv4 address", b.RouterID))
	}
	if b.HoldTime < 3*time.Second || b.HoldTime > 65535*time.Second {
		errs = append(errs, fmt.Errorf("holdtime %s: outside 3s..65535s", b.HoldTime))
	}
	if b.GracefulRestartTime < time.Second || b.GracefulRestartTime > 4095*time.Second {
		errs = append(errs, fmt.Errorf("graceful-restart-time %s: outside 1s..4095s (RFC 4724)", b.GracefulRestartTime))
	}
	if b.EBGPMultihop < 1 || b.EBGPMultihop > 255 {
		errs = append(errs, fmt.Errorf("ebgp-multihop %d: outside 1..255", b.EBGPMultihop))
	}
	return errs
}

// asFlag is an AS number: 1..4294967295.
type asFlag struct{ as *uint32 }

func (f asFlag) String() string {
	if f.as == nil {
		return ""
	}
	return fmt.Sprint(*f.as)
}

func (f asFlag) Set(s string) error {
	var n uint64
	if _, err := fmt.Sscan(s, &n); err != nil || n == 0 || n > 1<<32-1 || fmt.Sprint(n) != s {
		return fmt.Errorf("AS number %q: want 1..4294967295", s)
	}
	*f.as = uint32(n)
	return nil
}

// neighborFamily refuses a neighbour of the other family than the flag's.
func neighborFamily(v6 bool) func(netip.Addr) error {
	return func(a netip.Addr) error {
		if a.Is6() != v6 {
			return fmt.Errorf("%s: wrong family (IPv4 neighbours go to neighbor-address, IPv6 to neighbor-ipv6-address)", a)
		}
		return nil
	}
}
