package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is everything the daemon needs; one struct, defaults from Default, flags bound
// by AddFlags, checked by Validate before anything starts. The roles' options are its
// embedded parts, each handed to its role whole (roles.go): Cluster to both, Node to the node
// role, Controller to the controller role; the rest is the daemon's own.
type Config struct {
	// Kubeconfig is the API server credentials file; empty means in-cluster config.
	Kubeconfig string

	Cluster
	Node
	Controller

	// OVNCACert, OVNCert and OVNKey are PEM files for ssl: database endpoints.
	OVNCACert string
	OVNCert   string
	OVNKey    string

	LeaseNamespace string
	LeaseName      string
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration

	// MetricsAddress is the host:port serving /metrics, /healthz and /readyz; empty: none.
	MetricsAddress string
	// Profiling serves Go's /debug/pprof/ profiles on MetricsAddress.
	Profiling bool
	// MemoryLimitMiB is Go's soft memory limit in MiB (raised to twice the live heap when
	// that is more); 0: none. GOMEMLIMIT in the environment overrides it.
	MemoryLimitMiB int
}

// DefaultMetricsAddress is local only: Kube-OVN's CNI daemon serves its metrics on 10665.
const DefaultMetricsAddress = "127.0.0.1:10665"

// Where the tunnel endpoint is found (EncapIPFrom).
const (
	EncapFromDefaultRoute = "default-route"
	EncapFromNodeIP       = "node-ip"
)

// K3sKubeconfig is where k3s writes the admin kubeconfig.
const K3sKubeconfig = "/etc/rancher/k3s/k3s.yaml"

// Default returns the configuration of a k3s host with Debian's OVN packages.
func Default() Config {
	host, _ := os.Hostname()
	// k3s writes its kubeconfig when it starts, after edgeovn: the default names the file
	// even before it exists (edgeovn waits for it); in a pod, the in-cluster config.
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		kubeconfig = K3sKubeconfig
	}
	return Config{
		Kubeconfig: kubeconfig,
		Cluster: Cluster{
			ClusterCIDR:  netip.MustParsePrefix("10.42.0.0/16"),
			ServiceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16")},
			Services:     true,
			SBEndpoints:  []string{"unix:/var/run/ovn/ovnsb_db.sock"},
		},
		Node: Node{
			NodeName:        strings.ToLower(host),
			OVSEndpoint:     "unix:/var/run/openvswitch/db.sock",
			KubeProxy:       KubeProxyAuto,
			EncapIPFrom:     EncapFromDefaultRoute,
			MTU:             1400,
			CNISocket:       "/run/edgeovn/cni.sock",
			CNIConfDir:      "/etc/cni/net.d",
			CNIBinDir:       "/opt/cni/bin",
			CNIBinarySource: "/usr/lib/edgeovn/edgeovn-cni",
			CNITimeout:      60 * time.Second,
			BGP:             defaultBGP(),
			Mirror:          DefaultMirror(),
			Pinger:          DefaultPinger(),
		},
		Controller: Controller{
			NBEndpoints:   []string{"unix:/var/run/ovn/ovnnb_db.sock"},
			IPAMDatabase:  "/var/lib/edgeovn/ipam.db",
			JoinCIDR:      netip.MustParsePrefix("100.64.0.0/16"),
			NetworkPolicy: true,
			// 64: measured with ctrlbench (Controller.Workers says how).
			Workers: 64,
		},
		LeaseNamespace: "kube-system",
		LeaseName:      "edgeovn-controller",
		LeaseDuration:  6 * time.Second,
		RenewDeadline:  4 * time.Second,
		RetryPeriod:    time.Second,
		MetricsAddress: DefaultMetricsAddress,
		// 30: measured with ctrlbench (README, Controller).
		MemoryLimitMiB: 30,
	}
}

// Validate fills derived defaults and reports every invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if c.NodeName == "" {
		errs = append(errs, errors.New("node-name: empty"))
	}
	if c.MemoryLimitMiB < 0 {
		errs = append(errs, fmt.Errorf("memory-limit-mib %d: 0 (none) or more", c.MemoryLimitMiB))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("controller-workers %d: at least 1", c.Workers))
	}
	errs = append(errs, c.validateNetworks()...)
	errs = append(errs, c.validateServices()...)
	errs = append(errs, c.validateBGP()...)
	errs = append(errs, c.validateObserve()...)
	if c.MTU < 576 || c.MTU > 9000 {
		errs = append(errs, fmt.Errorf("mtu %d: outside 576..9000", c.MTU))
	}
	errs = append(errs, checkEndpointList("ovn-nb", c.NBEndpoints)...)
	errs = append(errs, checkEndpointList("ovn-sb", c.SBEndpoints)...)
	if err := checkEndpoint(c.OVSEndpoint); err != nil {
		errs = append(errs, fmt.Errorf("ovs-db: %w", err))
	}
	if anySSL(append(c.NBEndpoints, c.OVSEndpoint)...) && (c.OVNCACert == "" || c.OVNCert == "" || c.OVNKey == "") {
		errs = append(errs, errors.New("ssl: endpoint given: set ovn-ca-cert, ovn-cert and ovn-key"))
	}
	errs = append(errs, c.validateEncap()...)
	if c.DatapathType != "" && c.DatapathType != "system" && c.DatapathType != "netdev" {
		errs = append(errs, fmt.Errorf("datapath-type %q: want system or netdev", c.DatapathType))
	}
	for name, v := range map[string]string{"ipam-db": c.IPAMDatabase, "cni-socket": c.CNISocket,
		"cni-conf-dir": c.CNIConfDir, "cni-bin-dir": c.CNIBinDir, "lease-namespace": c.LeaseNamespace, "lease-name": c.LeaseName} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s: empty", name))
		}
	}
	if c.CNITimeout <= 0 {
		errs = append(errs, fmt.Errorf("cni-timeout %s: must be positive", c.CNITimeout))
	}
	if err := checkListenAddress(c.MetricsAddress); err != nil {
		errs = append(errs, fmt.Errorf("metrics-address %q: %w", c.MetricsAddress, err))
	}
	if c.RetryPeriod <= 0 || c.RenewDeadline <= c.RetryPeriod || c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, fmt.Errorf("lease timings: want duration %s > renew deadline %s > retry period %s > 0",
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod))
	}
	return errors.Join(errs...)
}

// checkListenAddress accepts "" (off) and host:port with a numeric port.
func checkListenAddress(a string) error {
	if a == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		return errors.New("want host:port, such as 127.0.0.1:10665, or empty for none")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("port %q: want 1..65535", port)
	}
	return nil
}

// checkEndpointList: a database's endpoints, one or a raft cluster's members, each given
// once and on its own (OVN's comma-separated form is for ovn-remote, which edgeovn writes).
func checkEndpointList(flag string, eps []string) []error {
	if len(eps) == 0 {
		return []error{fmt.Errorf("%s: no endpoint", flag)}
	}
	var errs []error
	seen := make(map[string]bool, len(eps))
	for _, e := range eps {
		switch {
		case strings.Contains(e, ","):
			errs = append(errs, fmt.Errorf("%s %q: one endpoint per entry: give each raft member as its own --%s flag or list item", flag, e, flag))
		case seen[e]:
			errs = append(errs, fmt.Errorf("%s %q: given twice", flag, e))
		default:
			if err := checkEndpoint(e); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", flag, err))
			}
		}
		seen[e] = true
	}
	if len(eps) > 1 && slices.ContainsFunc(eps, func(e string) bool { return strings.HasPrefix(e, "unix:") }) {
		errs = append(errs, fmt.Errorf("%s %v: a unix socket reaches one local server; a raft cluster's members are tcp: or ssl: addresses", flag, eps))
	}
	return errs
}

func checkEndpoint(e string) error {
	for _, scheme := range []string{"unix:", "tcp:", "ssl:"} {
		if strings.HasPrefix(e, scheme) && len(e) > len(scheme) {
			return nil
		}
	}
	return fmt.Errorf("ovsdb endpoint %q: want unix:PATH, tcp:HOST:PORT or ssl:HOST:PORT", e)
}

// validateEncap: a fixed tunnel endpoint must be a unicast address other hosts can reach,
// never a loopback; the source must be one edgeovn knows.
func (c *Config) validateEncap() []error {
	var errs []error
	if c.EncapIP.IsValid() && (c.EncapIP.IsLoopback() || c.EncapIP.IsUnspecified() || c.EncapIP.IsMulticast()) {
		errs = append(errs, fmt.Errorf("encap-ip %s: not an address other hosts can reach (loopback, unspecified or multicast)", c.EncapIP))
	}
	if c.EncapIPFrom != EncapFromDefaultRoute && c.EncapIPFrom != EncapFromNodeIP {
		errs = append(errs, fmt.Errorf("encap-ip-from %q: want %s or %s", c.EncapIPFrom, EncapFromDefaultRoute, EncapFromNodeIP))
	}
	return errs
}
