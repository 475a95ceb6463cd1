package harness

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// CoreDNS's ports inside its pod: DNS, and the ready plugin's HTTP endpoint.
const (
	coreDNSPort      = 53
	coreDNSReadyPort = 8181
)

// CoreDNSRequest says where to run CoreDNS.
type CoreDNSRequest struct {
	// Name is the process and log name and the stem of its Corefile; empty means "coredns".
	Name string
	// Netns is the network namespace to run in: a pod sandbox's bind-mount path, which must be
	// in /run/netns (podsim's sandboxes are).
	Netns string
	// Corefile replaces the default (see Corefile) when set.
	Corefile string
}

// Corefile is the rig's CoreDNS configuration, k3s's without what needs the outside world or
// k3s's files: no forward (there is no upstream here), no hosts file, no metrics or reload.
// The kubernetes plugin reads the API server through PodKubeconfig, as k3s's CoreDNS pod reads
// it through the "kubernetes" Service.
func (r *Rig) Corefile() string {
	return `.:` + strconv.Itoa(coreDNSPort) + ` {
    errors
    health
    ready :` + strconv.Itoa(coreDNSReadyPort) + `
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ` + r.PodKubeconfig + ` rig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
`
}

// StartCoreDNS starts CoreDNS as a process inside a pod's network namespace, listening on
// port 53 (UDP and TCP) of every address there, and waits until its ready plugin answers on
// 127.0.0.1:8181 in that namespace, which it does once the kubernetes plugin has synced with
// the API server, and until it answers a query on 127.0.0.1:53 (ready turns OK a moment
// before the DNS listeners are bound). The pod must therefore reach PodAPIServerURL first: edgeovn must have wired
// the host (the node's join annotations, ovn0 bound) before this is called.
func (r *Rig) StartCoreDNS(ctx context.Context, req CoreDNSRequest) (*Process, error) {
	bin := r.opts.componentPath(CoreDNS)
	if err := checkBinary(CoreDNS, bin); err != nil {
		return nil, fmt.Errorf("start coredns: %w", err)
	}
	if req.Name == "" {
		req.Name = "coredns"
	}
	if dir := filepath.Dir(req.Netns); dir != netnsDir && dir != "/var"+netnsDir {
		return nil, fmt.Errorf("start %s: netns %q is not in %s", req.Name, req.Netns, netnsDir)
	}
	corefile := req.Corefile
	if corefile == "" {
		corefile = r.Corefile()
	}
	conf := r.path(req.Name + ".Corefile")
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		return nil, fmt.Errorf("start %s: write %s: %w", req.Name, conf, err)
	}
	spec := ProcessSpec{Name: req.Name, Path: bin, Netns: filepath.Base(req.Netns), Args: []string{"-conf", conf}}
	ready := httpOK(req.Netns, fmt.Sprintf("http://127.0.0.1:%d/ready", coreDNSReadyPort))
	answers := dnsAnswers(req.Netns, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), coreDNSPort))
	return r.spawn(ctx, spec, func(ctx context.Context) error {
		if err := ready(ctx); err != nil {
			return err
		}
		return answers(ctx)
	})
}

// rootNSQuery is a DNS query for the root zone's NS records: any server answers it somehow.
var rootNSQuery = []byte{
	0xed, 0x0e, // id
	0x01, 0x00, // flags: recursion desired
	0, 1, 0, 0, 0, 0, 0, 0, // one question, no other records
	0,    // the root name
	0, 2, // type NS
	0, 1, // class IN
}

// dnsAnswers is a readiness check: a DNS query over UDP to addr from inside the namespace at
// netnsPath gets a reply, whatever it says.
func dnsAnswers(netnsPath string, addr netip.AddrPort) func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := dialInNetns(ctx, netnsPath, "udp", addr.String())
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(pollInterval * 4))
		if _, err := c.Write(rootNSQuery); err != nil {
			return fmt.Errorf("dns query to %s: %w", addr, err)
		}
		if _, err := c.Read(make([]byte, 512)); err != nil {
			return fmt.Errorf("dns query to %s: %w", addr, err)
		}
		return nil
	}
}
