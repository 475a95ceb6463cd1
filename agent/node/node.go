package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/cni/server"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// Bridge is the integration bridge ovn-controller programs.
const Bridge = "br-int"

// Request is what the node role runs with.
type Request struct {
	// Kube returns the API client, waiting until it can be made (the kubeconfig may not exist
	// yet at boot): the node role serves and reports ready without it.
	Kube        func(context.Context) (kubernetes.Interface, error)
	NodeName    string
	OVSEndpoint string
	SBEndpoint  string
	ClusterCIDR netip.Prefix // routed to OVN through ovn0, masqueraded when leaving the host
	// ServiceCIDRs are routed to OVN through ovn0 too: the load balancers on the join
	// switch serve the host's own traffic to ClusterIPs.
	ServiceCIDRs []netip.Prefix
	// Services: edgeovn serves Services (off: nothing of it on this host). KubeProxy is
	// "auto", "present" or "absent": who serves node ports on this host.
	Services        bool
	KubeProxy       string
	EncapIP         netip.Addr // invalid: detect
	DatapathType    string     // empty: detect
	MTU             int
	CNISocket       string
	CNIConfDir      string
	CNIBinDir       string
	CNIBinarySource string
	CNITimeout      time.Duration
	TLS             *tls.Config // for an ssl: Open_vSwitch endpoint
	// Health evaluates the node's readiness (CNI STATUS, systemd) and reports its changes;
	// nil: a Monitor of the role's own, reporting to the log only.
	Health *health.Monitor
	Log    *slog.Logger
}

// Role is a running node role.
type Role struct {
	req    Request
	log    *slog.Logger
	ovs    *vswitch.Client
	ready  *readiness
	health *health.Monitor
}

// Run runs the node role until ctx ends.
func Run(ctx context.Context, req Request) error {
	r := &Role{req: req, log: req.Log, health: req.Health}
	if r.health == nil {
		r.health = health.NewMonitor(health.MonitorRequest{Log: req.Log})
	}
	ovs, err := vswitch.Connect(ctx, ovn.ConnectRequest{Endpoints: []string{req.OVSEndpoint}, TLS: req.TLS, Log: req.Log})
	if err != nil {
		return fmt.Errorf("connect open_vswitch database %s: %w", req.OVSEndpoint, err)
	}
	defer ovs.Close()
	r.ovs = ovs
	r.ready = newReadiness(defaultProbes(ovs))
	datapath, err := r.ensureDatapath(ctx)
	if err != nil {
		return err
	}
	pods := newPendingPods()
	listening := make(chan struct{})
	srv, err := server.New(server.Config{Socket: req.CNISocket, Pods: pods, Ports: ports{ovs},
		Ready: r.checkReady, DisableTxChecksum: datapath == "netdev", Timeout: req.CNITimeout, Log: req.Log,
		Listening: func() { close(listening) }})
	if err != nil {
		return fmt.Errorf("create cni server: %w", err)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Serve(ctx) })
	g.Go(func() error { return r.health.Run(ctx, r.ready.checks()) })
	g.Go(func() error { return r.runWithAPI(ctx, pods) })
	if datapath == vswitch.DatapathNetdev {
		g.Go(func() error { ovs.KeepZeroSNATOff(ctx, datapath, 5*time.Second, r.log); return nil })
	}
	g.Go(func() error {
		select {
		case <-listening:
			return r.install(ctx)
		case <-ctx.Done():
			return nil
		}
	})
	return g.Wait()
}

// ensureDatapath tells ovn-controller who this chassis is and ensures br-int.
func (r *Role) ensureDatapath(ctx context.Context) (string, error) {
	datapath := r.req.DatapathType
	if datapath == "" {
		datapath = vswitch.DetectDatapathType("")
	}
	encap := r.req.EncapIP
	if !encap.IsValid() {
		var err error
		if encap, err = defaultEncapIP(); err != nil {
			return "", err
		}
	}
	err := r.ovs.SetOVNConfig(ctx, map[string]string{
		"system-id":                r.req.NodeName,
		"hostname":                 r.req.NodeName,
		"ovn-remote":               r.req.SBEndpoint,
		"ovn-encap-type":           "geneve",
		"ovn-encap-ip":             encap.String(),
		"ovn-bridge":               Bridge,
		"ovn-bridge-datapath-type": datapath,
	})
	if err != nil {
		return "", fmt.Errorf("configure chassis %s: %w", r.req.NodeName, err)
	}
	if err := r.ovs.EnsureBridge(ctx, vswitch.BridgeSpec{Name: Bridge, DatapathType: datapath, Owner: r.req.NodeName, Adopt: true}); err != nil {
		return "", fmt.Errorf("ensure %s (%s datapath): %w", Bridge, datapath, err)
	}
	r.log.Info("datapath ready", "bridge", Bridge, "datapath", datapath, "encap_ip", encap.String(), "chassis", r.req.NodeName)
	return datapath, nil
}

// install puts the CNI binary and config in place once the server answers on its socket.
func (r *Role) install(ctx context.Context) error {
	src, err := binarySource(r.req.CNIBinarySource)
	if err != nil {
		return err
	}
	wroteBin, err := installBinary(src, r.req.CNIBinDir)
	if err != nil {
		return err
	}
	present, err := installPlugins(pluginInstall{SourceDir: filepath.Dir(src), BinDir: r.req.CNIBinDir, Log: r.log})
	if err != nil {
		return err
	}
	conf, err := conflist(r.req.CNISocket, present["portmap"])
	if err != nil {
		return err
	}
	confPath := filepath.Join(r.req.CNIConfDir, ConfName)
	wroteConf, err := writeFileAtomic(confPath, conf, 0o644)
	if err != nil {
		return err
	}
	r.ready.markInstalled()
	r.log.Info("node role ready", "cni_conf", confPath, "conf_written", wroteConf, "binary_written", wroteBin)
	_ = r.health.Check(ctx) // report the verdict now rather than at the next tick
	return nil
}

// startGrace bounds how long a CNI STATUS or ADD that arrives while the node role is still
// installing its files waits for them: after a restart (systemctl restart edgeovn) the
// datapath is up all along, and containerd's STATUS landing in that moment would otherwise
// turn the node NotReady until its next one, seconds later.
const startGrace = 5 * time.Second

// checkReady is CNI STATUS and the guard of ADD: the datapath's health, checked live, once
// the node role has installed its files (or startGrace passed).
func (r *Role) checkReady(ctx context.Context) error {
	r.ready.waitInstalled(ctx, startGrace)
	return r.health.Check(ctx)
}
