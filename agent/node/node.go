package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/agent/startup"
	"github.com/edgeovn/edgeovn/cni/server"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
	"github.com/edgeovn/edgeovn/systemd"
)

// Bridge is the integration bridge ovn-controller programs.
const Bridge = "br-int"

// Request is what the node role runs with.
type Request struct {
	// Kube returns the API client, waiting until it can be made (the kubeconfig may not exist
	// yet at boot): the node role serves and reports ready without it.
	Kube func(context.Context) (*kubeapi.Client, error)
	// Dynamic returns the client of kubeovn.io/v1 Subnets, whose CIDRs are routed and
	// masqueraded like the cluster CIDR; nil: only the cluster CIDR is.
	Dynamic func(context.Context) (dynamic.Interface, error)
	// Cluster and Node are the role's options, handed down whole from the daemon's Config.
	config.Cluster
	config.Node
	TLS *tls.Config // for ssl: Open_vSwitch and southbound endpoints
	// Health evaluates the node's readiness (CNI STATUS, systemd) and reports its changes;
	// nil: a Monitor of the role's own, reporting to the log only.
	Health *health.Monitor
	// Metrics receives the CNI requests' outcomes and counts the OVS transactions; nil: none.
	Metrics *metrics.Metrics
	// Startup receives the marks of the role's start ("ovsdb", "datapath", "serving",
	// "installed"); nil: not recorded.
	Startup *startup.Phases
	// Started is called once the role's start has its first verdict (ready or not, reported
	// to Health): what needs the API server waits for it (AfterStart). Nil: nobody waits.
	Started func()
	// BGPReload gives new BGP options (the config file read again at SIGHUP): the speaker is
	// started, stopped or started again with them, the rest of the role untouched. Nil: the
	// options of the start stay.
	BGPReload <-chan config.BGP
	// AddStarted is called as each CNI ADD begins (the agent's soft memory limit steps aside
	// while pods are being wired); nil: nothing is.
	AddStarted func()
	Log        *slog.Logger
}

// Role is a running node role.
type Role struct {
	req    Request
	log    *slog.Logger
	ovs    *vswitch.Client
	ready  *readiness
	health *health.Monitor
	// datapath is br-int's datapath type, as detected or configured at start.
	datapath string
	host     hostState
	encap    *encapState
	// sb reads this chassis's Port_Bindings for the binding watch (sbbindings.go).
	sb sbBindings
	// hostPorts serves the pods' hostPorts (restored from their ports' records at start).
	hostPorts *hostnet.HostPorts
	// shaper applies the pods' QoS annotations (podqos.go).
	shaper *podShaper
	// events is the one netlink subscription readiness, drift and the host's networks share.
	events hostEvents
	// portAdded receives a token after a CNI ADD plugged a pod port (the mirror adds it).
	portAdded chan struct{}
	// started is closed once the start has its first verdict (markStarted).
	started     chan struct{}
	startedOnce sync.Once
	// subnets is the view of the Subnets once the host wiring watches them (u2o.go reads it;
	// the BGP speaker shares its informer once subnetsSet is closed).
	subnets     atomic.Pointer[subnetView]
	subnetsSet  chan struct{}
	subnetsOnce sync.Once
}

// Run runs the node role until ctx ends.
func Run(ctx context.Context, req Request) error {
	// Probed while the datapath comes up; the conflist waits for it.
	r := &Role{req: req, log: req.Log, health: req.Health, encap: newEncapState(),
		hostPorts: hostnet.NewHostPorts(req.Log), started: make(chan struct{}), portAdded: make(chan struct{}, 1), subnetsSet: make(chan struct{})}
	if r.health == nil {
		r.health = health.NewMonitor(health.MonitorRequest{Log: req.Log})
	}
	ovs, err := vswitch.Connect(ctx, ovn.ConnectRequest{Endpoints: []string{req.OVSEndpoint}, TLS: req.TLS, Log: req.Log,
		Metrics: req.Metrics.OVSTransactions()})
	if err != nil {
		return fmt.Errorf("connect open_vswitch database %s: %w", req.OVSEndpoint, err)
	}
	defer ovs.Close()
	req.Startup.Mark("ovsdb")
	r.ovs = ovs
	probes := defaultProbes(ovs)
	probes.encap = r.encap.ready
	r.ready = newReadiness(probes)
	datapath, err := r.ensureDatapath(ctx)
	if err != nil {
		return err
	}
	r.datapath = datapath
	req.Startup.Mark("datapath")
	if err := r.syncEncap(ctx, r.log); err != nil {
		r.log.Warn("find encapsulation address, will retry", "err", err) // readiness says so meanwhile
	}
	if err := r.restoreHostPorts(ctx, r.log); err != nil {
		r.log.Warn("restore host ports, the drift check will retry", "err", err)
	}
	pods := newPendingPods()
	r.shaper = newPodShaper(ovs, req.Log)
	listening := make(chan struct{})
	passed, err := systemd.ActivatedListener(req.CNISocket, req.Log)
	if err != nil {
		req.Log.Warn("sockets passed by systemd", "err", err)
	}
	srv, err := server.New(server.Config{Socket: req.CNISocket, Listener: passed, Pods: pods, Ports: ports{ovs, r.portAdded}, HostPorts: hostPorts{r.hostPorts}, Shaper: r.shaper,
		Ready: r.checkReady, AddReady: r.checkReadyForAdd, AddStarted: req.AddStarted, DisableTxChecksum: datapath == "netdev", Timeout: req.CNITimeout, Log: req.Log,
		Listening: func() { req.Startup.Mark("serving"); close(listening) }, Observer: req.Metrics,
		SubnetProviders: func(p string) (bool, bool) { return r.subnetView().hasProvider(p) }})
	if err != nil {
		return fmt.Errorf("create cni server: %w", err)
	}
	// Checks are attached before anything can ask for a verdict; the first evaluation is
	// install's Recheck, once the files are in place (one before could only say "starting").
	if err := r.health.Attach(r.ready.checks()); err != nil {
		return err
	}
	// What serves the CNI requests runs until the server has drained its requests in flight,
	// which outlasts ctx: a request taken before the stop still gets its pod network.
	parts, stopParts := context.WithCancel(context.WithoutCancel(ctx))
	defer stopParts()
	g, gctx := errgroup.WithContext(parts)
	serving, stopServing := context.WithCancel(ctx)
	defer stopServing()
	context.AfterFunc(gctx, stopServing) // a part that fails stops the server too
	g.Go(func() error { defer stopParts(); return srv.Serve(serving) })
	g.Go(func() error { return r.health.Tick(gctx) })
	if err := r.events.start(gctx); err != nil {
		r.log.Warn("cannot watch the host's links, addresses and routes: readiness, drift and the host's networks are re-checked on their timers", "err", err)
	}
	g.Go(func() error { r.watchReadiness(gctx, r.health, ovs.Changes()); return nil })
	g.Go(func() error { return r.runWithAPI(gctx, pods) })
	if datapath == vswitch.DatapathNetdev {
		g.Go(func() error { ovs.KeepZeroSNATOff(gctx, datapath, 5*time.Second, r.log); return nil })
		g.Go(func() error { r.purgeStaleFlows(gctx); return nil })
		g.Go(func() error { r.keepTCPSeqCheckOff(gctx); return nil })
	}
	g.Go(func() error {
		select {
		case <-listening:
			if err := r.install(gctx); err != nil {
				return err
			}
			return r.keepWired(gctx)
		case <-gctx.Done():
			return nil
		}
	})
	return g.Wait()
}

// bridgeDeviceWait bounds ensureDatapath's wait for br-int's kernel device before it tells
// ovn-controller its chassis name (normally tens of milliseconds, nothing on a restart).
const bridgeDeviceWait = 5 * time.Second

// ensureDatapath ensures br-int and then tells ovn-controller who this chassis is. The order
// matters on a host's first boot: ovn-controller, once it has a system-id, connects to br-int's
// OpenFlow socket at once, and when ovs-vswitchd has not made the bridge yet it waits a
// reconnect backoff (1 s, doubling to 8 s) before it tries again; with no flows, no port is
// bound, and that wait was on the first pod's path. So br-int (with the datapath type, which
// ovn-controller also reads) comes first, its device is awaited, and the chassis last.
func (r *Role) ensureDatapath(ctx context.Context) (string, error) {
	datapath := r.req.DatapathType
	if datapath == "" {
		datapath = vswitch.DetectDatapathType("")
	}
	if err := r.ovs.SetOVNConfig(ctx, map[string]string{"ovn-bridge": Bridge, "ovn-bridge-datapath-type": datapath}); err != nil {
		return "", fmt.Errorf("configure the integration bridge of chassis %s: %w", r.req.NodeName, err)
	}
	if err := r.ovs.EnsureBridge(ctx, vswitch.BridgeSpec{Name: Bridge, DatapathType: datapath, Owner: r.req.NodeName, Adopt: true}); err != nil {
		return "", fmt.Errorf("ensure %s (%s datapath): %w", Bridge, datapath, err)
	}
	wait, cancel := context.WithTimeout(ctx, bridgeDeviceWait)
	err := hostnet.WaitLink(wait, Bridge)
	cancel()
	if err != nil && ctx.Err() == nil {
		r.log.Warn("br-int's device not made yet, configuring the chassis anyway (readiness waits for it)", "err", err)
	}
	// The encapsulation address is syncEncap's: found, kept current, never a loopback.
	err = r.ovs.SetOVNConfig(ctx, map[string]string{
		"system-id":  r.req.NodeName,
		"hostname":   r.req.NodeName,
		"ovn-remote": OVNRemote(r.req.SBEndpoints),
		// Tunnels leave from the encapsulation address, not the route's preferred source: on a
		// host with several addresses (or after the endpoint moved) the other hosts' tunnel
		// ports match incoming packets by that address.
		"ovn-set-local-ip": "true",
	})
	if err != nil {
		return "", fmt.Errorf("configure chassis %s: %w", r.req.NodeName, err)
	}
	r.log.Info("datapath configured", "bridge", Bridge, "datapath", datapath, "chassis", r.req.NodeName)
	return datapath, nil
}

// install puts the CNI binary and config in place once the server answers on its socket.
// When every file still has the stamp the last full check recorded (filerecord.go), those
// stats stand for the check: nothing would be written.
func (r *Role) install(ctx context.Context) error {
	paths, err := r.recordPaths()
	if err != nil {
		return err
	}
	full := !r.filesUnchanged(paths)
	w := installed{conf: filepath.Join(r.req.CNIConfDir, ConfName)}
	if full {
		if w, err = r.installFiles(); err != nil {
			return err
		}
	}
	r.ready.markInstalled()
	r.req.Startup.Mark("installed")
	_ = r.host.files.take(r.filePaths()) // a failure means a full check at the first tick
	checked := "by their recorded stamps"
	if full {
		checked = "in full"
	}
	r.log.Info("cni files installed", "cni_conf", w.conf, "conf_written", w.wroteConf, "binary_written", w.wroteBin, "files_checked", checked)
	_ = r.health.Recheck(ctx) // report the verdict now, not at the next tick (nor the one in flight)
	r.markStarted()
	if full {
		r.recordFiles(paths)
	}
	return nil
}

// markStarted lets what waits for the start (AfterStart) go.
func (r *Role) markStarted() {
	r.startedOnce.Do(func() {
		close(r.started)
		if r.req.Started != nil {
			r.req.Started()
		}
	})
}

// recordFiles saves the stamps of paths for the next start; a failure only costs it a full
// check.
func (r *Role) recordFiles(paths []string) {
	if err := r.saveFilesRecord(paths); err != nil {
		r.log.Warn("record the cni files' stamps (the next start checks them in full)", "err", err)
	}
}

// installed says what installFiles wrote.
type installed struct {
	conf                string
	wroteBin, wroteConf bool
	plugins             bool // a plugin was installed or upgraded (installPlugins logs which)
}

func (w installed) wrote() bool { return w.wroteBin || w.wroteConf || w.plugins }

// installFiles writes the CNI binary, the plugins and the config where they differ from what
// edgeovn ships, the config last.
func (r *Role) installFiles() (installed, error) {
	w := installed{conf: filepath.Join(r.req.CNIConfDir, ConfName)}
	src, err := binarySource(r.req.CNIBinarySource)
	if err != nil {
		return w, err
	}
	if w.wroteBin, err = installBinary(src, r.req.CNIBinDir); err != nil {
		return w, err
	}
	if _, err := linkKubeOVN(r.req.CNIBinDir); err != nil {
		r.log.Warn("cni binary not installed as kube-ovn: NetworkAttachmentDefinitions of type kube-ovn will fail", "err", err)
	}
	present, err := installPlugins(pluginInstall{SourceDir: filepath.Dir(src), BinDir: r.req.CNIBinDir, Log: r.log})
	if err != nil {
		return w, err
	}
	w.plugins = present.wrote
	conf, err := conflist(r.req.CNISocket)
	if err != nil {
		return w, err
	}
	w.wroteConf, err = writeFileAtomic(w.conf, conf, 0o644)
	return w, err
}

// checkReady is CNI STATUS and the guard of ADD: the datapath's health, checked live. A call
// that arrives while the role is starting (one queued on the socket during a restart) waits
// for the start, within its own deadline and startWait, rather than failing.
func (r *Role) checkReady(ctx context.Context) error {
	if err := r.ready.waitInstalled(ctx, startWait); err != nil {
		return err
	}
	return r.health.Check(ctx)
}

// addVerdictAge is how old a passing verdict an ADD acts on may be: under the monitor's
// interval (health.DefaultInterval), so a burst of ADDs makes one evaluation a second.
const addVerdictAge = time.Second

// checkReadyForAdd is checkReady before an ADD: a passing verdict up to addVerdictAge old will
// do (health.Monitor.CheckRecent says why).
func (r *Role) checkReadyForAdd(ctx context.Context) error {
	if err := r.ready.waitInstalled(ctx, startWait); err != nil {
		return err
	}
	return r.health.CheckRecent(ctx, addVerdictAge)
}
