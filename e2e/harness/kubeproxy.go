package harness

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// KubeProxyMode is the proxier kube-proxy runs.
type KubeProxyMode string

// The modes the rig runs: iptables is k3s's default.
const (
	KubeProxyIPTables KubeProxyMode = "iptables"
	KubeProxyNFTables KubeProxyMode = "nftables"
)

// kube-proxy's serving ports, on 127.0.0.1 of the rig's namespace (k3s binds healthz there).
const (
	kubeProxyHealthzPort = 10256
	kubeProxyMetricsPort = 10249
)

// KubeProxyRequest says how to run kube-proxy. The zero value is k3s's default for the node "".
type KubeProxyRequest struct {
	// Node is --hostname-override: the Node object kube-proxy reads its addresses from (register
	// it first, with podsim's EnsureNode) and the name topology-aware routing matches.
	Node string
	// Mode is the proxier; empty means iptables.
	Mode KubeProxyMode
	// ClusterCIDR is the pod network; invalid means k3s's 10.42.0.0/16.
	ClusterCIDR netip.Prefix
	// Extra flags come last and override the defaults (--masquerade-all, say).
	Extra []string
}

// StartKubeProxy starts kube-proxy in the rig's namespace with the flags k3s gives it
// (cluster CIDR, conntrack limits left to the kernel, which a namespace could not change
// anyway, healthz and metrics on 127.0.0.1), and waits until it has programmed the API
// server's own "kubernetes" Service: its healthz answers and its rules name that Service.
func (r *Rig) StartKubeProxy(ctx context.Context, req KubeProxyRequest) (*Process, error) {
	bin := r.opts.componentPath(KubeProxy)
	if err := checkBinary(KubeProxy, bin); err != nil {
		return nil, fmt.Errorf("start kube-proxy: %w", err)
	}
	if req.Mode == "" {
		req.Mode = KubeProxyIPTables
	}
	cidr := clusterCIDR
	if req.ClusterCIDR.IsValid() {
		cidr = req.ClusterCIDR.String()
	}
	args := []string{
		"--proxy-mode=" + string(req.Mode),
		"--kubeconfig=" + r.Kubeconfig,
		"--cluster-cidr=" + cidr,
		"--hostname-override=" + req.Node,
		"--conntrack-max-per-core=0",
		"--conntrack-tcp-timeout-established=0s",
		"--conntrack-tcp-timeout-close-wait=0s",
		"--healthz-bind-address=127.0.0.1:" + strconv.Itoa(kubeProxyHealthzPort),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(kubeProxyMetricsPort),
	}
	spec := ProcessSpec{Name: "kube-proxy", Path: bin, Args: append(args, req.Extra...)}
	healthz := httpOK(r.NetnsPath, fmt.Sprintf("http://127.0.0.1:%d/healthz", kubeProxyHealthzPort))
	return r.spawn(ctx, spec, func(ctx context.Context) error {
		if err := healthz(ctx); err != nil {
			return err
		}
		rules, err := r.ProxyRules(ctx, req.Mode)
		if err != nil {
			return err
		}
		if !strings.Contains(rules, "default/kubernetes") {
			return fmt.Errorf("no rules for service default/kubernetes yet")
		}
		return nil
	})
}

// ProxyRules returns what kube-proxy in mode has programmed in the rig's namespace: the
// IPv4 nat and filter tables and the IPv6 nat table (iptables-save, ip6tables-save: an
// IPv6-only cluster's Services are only there) or the "ip kube-proxy" table (nft).
func (r *Rig) ProxyRules(ctx context.Context, mode KubeProxyMode) (string, error) {
	var out []byte
	var err error
	switch mode {
	case KubeProxyNFTables:
		out, err = r.Run(ctx, "nft", "list", "table", "ip", "kube-proxy")
	case KubeProxyIPTables, "":
		for _, save := range [][]string{{"iptables-save", "-t", "nat"}, {"iptables-save", "-t", "filter"}, {"ip6tables-save", "-t", "nat"}} {
			var b []byte
			if b, err = r.Run(ctx, save[0], save[1:]...); err != nil {
				break
			}
			out = append(out, b...)
		}
	default:
		return "", fmt.Errorf("kube-proxy rules: unknown mode %q", mode)
	}
	if err != nil {
		return "", fmt.Errorf("kube-proxy rules (%s): %w", mode, err)
	}
	return string(out), nil
}
