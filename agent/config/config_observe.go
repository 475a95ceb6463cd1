package config

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/agent/config/configfile"
)

// Mirror is traffic mirroring (Kube-OVN's --enable-mirror and --mirror-iface): an internal
// port of br-int that copies of pod traffic go out of, for tcpdump and the like.
type Mirror struct {
	// EnableMirror mirrors every packet on br-int (every pod port of this host); off, only
	// the pods annotated ovn.kubernetes.io/mirror: "true" are mirrored.
	EnableMirror bool
	// MirrorIface is the interface edgeovn creates for the copies (default mirror0); it is
	// there only while something is mirrored.
	MirrorIface string
}

// Pinger is the node role's network-quality prober (Kube-OVN's kube-ovn-pinger, in process).
type Pinger struct {
	// EnablePinger turns it on (off by default: nothing runs and nothing is exported).
	EnablePinger bool
	// PingerInterval is the time between rounds (Kube-OVN's --interval, 5 s).
	PingerInterval time.Duration
	// PingerPodsPerNode caps how many pods of each host one round pings (Kube-OVN pings one
	// pinger pod per host); PingerMaxTargets caps the round's pod and node targets in all,
	// which bounds its CPU and memory whatever the cluster's size.
	PingerPodsPerNode int
	PingerMaxTargets  int
	// PingerExternal are the external addresses pinged each round (Kube-OVN's
	// --external-address; none: not pinged).
	PingerExternal []netip.Addr
	// PingerClusterDNS is the cluster DNS server asked (k3s: 10.43.0.10; invalid: the 10th
	// address of the first Service CIDR, as k3s picks it).
	PingerClusterDNS netip.Addr
	// PingerInternalDNS is resolved through it each round (Kube-OVN's --internal-dns, with
	// the cluster domain appended when it has no dot at its end), PingerExternalDNS too
	// when set (Kube-OVN's --external-dns).
	PingerInternalDNS string
	PingerExternalDNS string
}

// DefaultMirror and DefaultPinger are Kube-OVN's defaults, both off.
func DefaultMirror() Mirror { return Mirror{MirrorIface: "mirror0"} }

func DefaultPinger() Pinger {
	return Pinger{PingerInterval: 5 * time.Second, PingerPodsPerNode: 3, PingerMaxTargets: 256,
		PingerInternalDNS: "kubernetes.default"}
}

func (c *Config) addObserveFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.EnableMirror, "enable-mirror", c.EnableMirror, "mirror every pod port of this host to --mirror-iface (off: only pods annotated ovn.kubernetes.io/mirror=true)")
	fs.StringVar(&c.MirrorIface, "mirror-iface", c.MirrorIface, "interface edgeovn creates on br-int for mirrored traffic")
	fs.BoolVar(&c.EnablePinger, "enable-pinger", c.EnablePinger, "measure latency and loss to pods, hosts, external addresses and DNS each --pinger-interval, exported as pinger_* metrics")
	fs.DurationVar(&c.PingerInterval, "pinger-interval", c.PingerInterval, "time between pinger rounds")
	fs.IntVar(&c.PingerPodsPerNode, "pinger-pods-per-node", c.PingerPodsPerNode, "pods of each host a pinger round pings")
	fs.IntVar(&c.PingerMaxTargets, "pinger-max-targets", c.PingerMaxTargets, "pods and hosts a pinger round pings in all")
	fs.Var(&addrListFlag{l: &c.PingerExternal}, "pinger-external-address", "external address the pinger pings (repeat or comma-separate; none: not pinged)")
	fs.Var(addrFlag{&c.PingerClusterDNS}, "pinger-cluster-dns", "cluster DNS server the pinger asks (default: 10th address of the first service-cidr)")
	fs.StringVar(&c.PingerInternalDNS, "pinger-internal-dns", c.PingerInternalDNS, "name the pinger resolves through the cluster DNS")
	fs.StringVar(&c.PingerExternalDNS, "pinger-external-dns", c.PingerExternalDNS, "external name the pinger resolves through the cluster DNS (empty: none)")
}

func (c *Config) validateObserve() []error {
	var errs []error
	if n := c.MirrorIface; n == "" || len(n) > 15 || strings.ContainsAny(n, " \t\n/:\"") || n == "br-int" || n == "ovn0" {
		errs = append(errs, fmt.Errorf("mirror-iface %q: want an interface name of 1..15 bytes, no whitespace, '/' or ':', not br-int or ovn0", n))
	}
	if !c.EnablePinger {
		return errs
	}
	if c.PingerInterval < time.Second {
		errs = append(errs, fmt.Errorf("pinger-interval %v: at least 1s", c.PingerInterval))
	}
	if c.PingerPodsPerNode < 0 {
		errs = append(errs, fmt.Errorf("pinger-pods-per-node %d: 0 or more", c.PingerPodsPerNode))
	}
	if c.PingerMaxTargets < 1 {
		errs = append(errs, fmt.Errorf("pinger-max-targets %d: at least 1", c.PingerMaxTargets))
	}
	if !c.PingerClusterDNS.IsValid() && len(c.ServiceCIDRs) > 0 && c.ServiceCIDRs[0].IsValid() {
		a := c.ServiceCIDRs[0].Masked().Addr()
		for range 10 {
			a = a.Next()
		}
		c.PingerClusterDNS = a
	}
	return errs
}

// addrListFlag is a repeatable, comma-separable list of addresses; accept, when set, refuses
// an address (BGP's neighbours: the other family).
type addrListFlag struct {
	l      *[]netip.Addr
	accept func(netip.Addr) error
}

var _ configfile.Repeated = (*addrListFlag)(nil)

func (f *addrListFlag) String() string {
	if f.l == nil {
		return ""
	}
	s := make([]string, len(*f.l))
	for i, a := range *f.l {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}

// Repeated: the config file gives a list.
func (f *addrListFlag) Repeated() {}

func (f *addrListFlag) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		a, err := netip.ParseAddr(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		if f.accept != nil {
			if err := f.accept(a); err != nil {
				return err
			}
		}
		*f.l = append(*f.l, a)
	}
	return nil
}
