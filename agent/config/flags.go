package config

import (
	"flag"
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/agent/config/configfile"
)

// AddFlags binds every field to a flag, with the current values as defaults.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.NodeName, "node-name", c.NodeName, "this host's Kubernetes Node name")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "kubeconfig file (empty: in-cluster)")
	fs.Var(dualPrefixFlag{&c.ClusterCIDR, &c.ClusterCIDRDual}, "cluster-cidr",
		"pod CIDR of the default subnet ovn-default; dual stack as k3s takes it: 10.42.0.0/16,2001:cafe:42::/56")
	fs.Var(dualAddrFlag{&c.ClusterGateway, &c.ClusterGatewayDual}, "cluster-gateway",
		"gateway of ovn-default, one per family of --cluster-cidr (default: each prefix's first address)")
	fs.Var(dualPrefixFlag{&c.JoinCIDR, &c.JoinCIDRDual}, "join-cidr",
		"CIDR of the join switch, one per family of --cluster-cidr (IPv6 default: fd00:100:64::/112)")
	fs.IntVar(&c.MTU, "mtu", c.MTU, "MTU of pod interfaces")
	fs.Var(&prefixListFlag{l: &c.ServiceCIDRs}, "service-cidr", "Service ClusterIP range; dual stack: 10.43.0.0/16,2001:cafe:43::/112 (or repeat the flag)")
	fs.BoolVar(&c.Services, "services", c.Services, "serve Services as OVN load balancers (false: leave them to another implementation)")
	fs.BoolVar(&c.NetworkPolicy, "network-policy", c.NetworkPolicy, "enforce NetworkPolicies as OVN ACLs (false: leave them to another engine)")
	fs.StringVar(&c.KubeProxy, "kube-proxy", c.KubeProxy, `who serves host traffic to ClusterIPs and NodePorts: "auto" (detect), "present" (kube-proxy) or "absent" (edgeovn)`)
	fs.Var(&listFlag{l: &c.NBEndpoints}, "ovn-nb", "OVN northbound endpoint; repeat once per member of a raft cluster")
	fs.Var(&listFlag{l: &c.SBEndpoints}, "ovn-sb", "OVN southbound endpoint (ovn-controller's ovn-remote); repeat once per member of a raft cluster")
	fs.StringVar(&c.OVSEndpoint, "ovs-db", c.OVSEndpoint, "local Open_vSwitch database endpoint")
	fs.StringVar(&c.OVNCACert, "ovn-ca-cert", c.OVNCACert, "CA certificate (PEM) for ssl: database endpoints")
	fs.StringVar(&c.OVNCert, "ovn-cert", c.OVNCert, "client certificate (PEM) for ssl: database endpoints")
	fs.StringVar(&c.OVNKey, "ovn-key", c.OVNKey, "client private key (PEM) for ssl: database endpoints")
	fs.Var(addrFlag{&c.EncapIP}, "encap-ip", "tunnel endpoint address of this host (default: found as --encap-ip-from says)")
	fs.StringVar(&c.EncapIPFrom, "encap-ip-from", c.EncapIPFrom, `where the tunnel endpoint is found without --encap-ip: "default-route" (its source address) or "node-ip" (the Node's InternalIP)`)
	fs.StringVar(&c.DatapathType, "datapath-type", c.DatapathType, `"system" or "netdev" (default: detected)`)
	fs.StringVar(&c.IPAMDatabase, "ipam-db", c.IPAMDatabase, "SQLite IPAM database")
	fs.StringVar(&c.CNISocket, "cni-socket", c.CNISocket, "unix socket of the CNI server")
	fs.StringVar(&c.CNIConfDir, "cni-conf-dir", c.CNIConfDir, "directory the CNI config is written to")
	fs.StringVar(&c.CNIBinDir, "cni-bin-dir", c.CNIBinDir, "directory the CNI binary is installed to")
	fs.StringVar(&c.CNIBinarySource, "cni-binary", c.CNIBinarySource, "CNI binary to install (default: next to this executable if missing)")
	fs.DurationVar(&c.CNITimeout, "cni-timeout", c.CNITimeout, "bound on one CNI ADD")
	fs.StringVar(&c.LeaseNamespace, "lease-namespace", c.LeaseNamespace, "namespace of the controller Lease")
	fs.StringVar(&c.LeaseName, "lease-name", c.LeaseName, "name of the controller Lease")
	fs.DurationVar(&c.LeaseDuration, "lease-duration", c.LeaseDuration, "controller Lease duration")
	fs.DurationVar(&c.RenewDeadline, "lease-renew-deadline", c.RenewDeadline, "controller Lease renew deadline")
	fs.DurationVar(&c.RetryPeriod, "lease-retry-period", c.RetryPeriod, "controller Lease retry period")
	fs.StringVar(&c.MetricsAddress, "metrics-address", c.MetricsAddress, "host:port serving /metrics, /healthz and /readyz (empty: off)")
	fs.IntVar(&c.Workers, "controller-workers", c.Workers, "pods the controller role syncs at once")
	fs.IntVar(&c.MemoryLimitMiB, "memory-limit-mib", c.MemoryLimitMiB, "Go's soft memory limit in MiB, raised to twice the live heap when more (0: none; GOMEMLIMIT overrides)")
	fs.BoolVar(&c.Profiling, "pprof", c.Profiling, "also serve Go's profiles under /debug/pprof/ on metrics-address")
	c.addBGPFlags(fs)
	c.addObserveFlags(fs)
}

// addrFlag and listFlag bind netip values and repeatable strings to package flag.

type addrFlag struct{ a *netip.Addr }

func (f addrFlag) String() string {
	if f.a == nil || !f.a.IsValid() {
		return ""
	}
	return f.a.String()
}

func (f addrFlag) Set(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return err
	}
	*f.a = a
	return nil
}

var (
	_ configfile.Repeated = (*listFlag)(nil)
	_ configfile.Repeated = (*prefixListFlag)(nil)
)

// listFlag replaces its defaults on first use, then appends.
type listFlag struct {
	l       *[]string
	touched bool
}

func (f *listFlag) String() string {
	if f.l == nil {
		return ""
	}
	return strings.Join(*f.l, " ")
}

// Repeated: the config file gives a list.
func (f *listFlag) Repeated() {}

func (f *listFlag) Set(s string) error {
	if s == "" {
		return nil
	}
	if !f.touched {
		*f.l, f.touched = nil, true
	}
	*f.l = append(*f.l, s)
	return nil
}

// prefixListFlag is listFlag for prefixes: the defaults go on first use.
type prefixListFlag struct {
	l       *[]netip.Prefix
	touched bool
}

func (f *prefixListFlag) String() string {
	if f.l == nil {
		return ""
	}
	s := make([]string, len(*f.l))
	for i, p := range *f.l {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// Repeated: the config file gives a list.
func (f *prefixListFlag) Repeated() {}

func (f *prefixListFlag) Set(s string) error {
	ps, err := ParseFamilies(s)
	if err != nil {
		return err
	}
	if !f.touched {
		*f.l, f.touched = nil, true
	}
	*f.l = append(*f.l, ps...)
	return nil
}
