package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Rig is one running simulated host. Its exported fields are fixed once Start returns.
type Rig struct {
	// Dir is the run directory: sockets, databases, pid files, logs, kubeconfig.
	Dir string
	// Netns is the host's network namespace name (`ip netns exec <Netns> ...`), NetnsPath its
	// bind-mount path (for setns).
	Netns     string
	NetnsPath string
	// LANNetns is the namespace of eth0's LAN peer (Options.LANPeer), holding the gateway's
	// address; empty without one.
	LANNetns string
	// NodeIP is the host's address on its uplink eth0 (a tap device no program reads, holding
	// the default route; nothing sent there leaves the namespace). The API server advertises it.
	NodeIP netip.Addr
	// NodeIP6 is eth0's IPv6 address (Options.NodeIPv6, or an IPv6-first service range);
	// invalid without one.
	NodeIP6 netip.Addr
	// NBEndpoint, SBEndpoint and OVSEndpoint are the OVSDB endpoints ("unix:<path>") of the OVN
	// northbound, OVN southbound and local Open_vSwitch databases.
	NBEndpoint  string
	SBEndpoint  string
	OVSEndpoint string
	// Kubeconfig is a token kubeconfig for the API server, usable from inside the namespace.
	Kubeconfig string
	// APIServerURL is the API server's address inside the namespace.
	APIServerURL string
	// PodAPIServerURL is the API server's address for pods, https://<NodeIP>:6443, the
	// "kubernetes" Service's endpoint: pods reach it through edgeovn's host wiring (ovn0).
	// PodKubeconfig is a token kubeconfig with that address (CoreDNS uses it).
	PodAPIServerURL string
	PodKubeconfig   string

	opts  Options
	log   *slog.Logger
	token string
	kube  kubernetes.Interface
	// raftMember: the rig's NB and SB database files are raft cluster members (RaftDBs).
	raftMember bool
	// uplink is what startHostOVS ran between ovs-vswitchd and ovn-controller (a Cluster
	// host's br-phy); Reboot runs it again, since the address was on ovs-vswitchd's tap.
	uplink func(context.Context) error

	mu      sync.Mutex
	procs   []*Process // in start order
	closers []func() error
	stopped bool
}

// Start brings up a rig: namespace, OVN central, Open vSwitch, ovn-controller, etcd and
// kube-apiserver, each waited for. On failure everything started is torn down again and the
// error carries the tail of the failing component's log.
func Start(ctx context.Context, o Options) (*Rig, error) {
	if err := preflight(o); err != nil {
		return nil, err
	}
	dir, err := prepareDir(o.Dir)
	if err != nil {
		return nil, err
	}
	name, err := newNetnsName()
	if err != nil {
		return nil, err
	}
	r := newRig(dir, name, o)
	if err := r.start(ctx); err != nil {
		if cerr := r.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	r.log.Info("rig up", "dir", r.Dir, "netns", r.Netns, "apiserver", r.APIServerURL)
	return r, nil
}

func newRig(dir, netnsName string, o Options) *Rig {
	return &Rig{
		Dir:             dir,
		Netns:           netnsName,
		NetnsPath:       filepath.Join(netnsDir, netnsName),
		NodeIP:          nodeIP.Addr(),
		NBEndpoint:      "unix:" + filepath.Join(dir, nbDB.stem+".sock"),
		SBEndpoint:      "unix:" + filepath.Join(dir, sbDB.stem+".sock"),
		OVSEndpoint:     "unix:" + filepath.Join(dir, vswitchDB.stem+".sock"),
		Kubeconfig:      filepath.Join(dir, "kubeconfig"),
		APIServerURL:    fmt.Sprintf("https://127.0.0.1:%d", apiServerPort),
		PodAPIServerURL: "https://" + netip.AddrPortFrom(map[bool]netip.Addr{false: nodeIP.Addr(), true: nodeIP6.Addr()}[o.ipv6Primary()], apiServerPort).String(),
		PodKubeconfig:   filepath.Join(dir, "kubeconfig-pod"),
		opts:            o,
		log:             o.logger(),
	}
}

func (r *Rig) start(ctx context.Context) error {
	if err := createNetns(ctx, r.Netns); err != nil {
		return err
	}
	if r.opts.LANPeer {
		r.LANNetns = r.Netns + "-lan"
		lan := r.LANNetns
		if err := r.onClose(func() error { return deleteNetns(lan) }); err != nil {
			return err
		}
		if err := addVethUplink(ctx, r.Netns, lan); err != nil {
			return err
		}
	} else if err := addTapUplink(ctx, r.Netns); err != nil {
		return err
	}
	if r.opts.ipv6Primary() || r.opts.NodeIPv6 {
		if err := ipSteps(ctx, r.Netns, [][]string{{"addr", "add", nodeIP6.String(), "dev", uplinkName, "nodad"}}); err != nil {
			return err
		}
		r.NodeIP6 = nodeIP6.Addr()
	}
	if err := os.WriteFile(r.path(netnsFile), []byte(r.Netns+"\n"), 0o644); err != nil {
		return fmt.Errorf("record netns name: %w", err)
	}
	r.log.Info("starting OVN and Open vSwitch", "netns", r.Netns)
	if err := r.startOVN(ctx); err != nil {
		return err
	}
	r.log.Info("starting etcd and kube-apiserver", "netns", r.Netns)
	if err := r.startKube(ctx); err != nil {
		return err
	}
	return r.writeEnvFile()
}

// prepareDir makes the run directory, refusing one that is too long for its sockets or that
// already holds a rig.
func prepareDir(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("/tmp", "eovn-")
		if err != nil {
			return "", fmt.Errorf("create run dir: %w", err)
		}
		return d, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("run dir %q: %w", dir, err)
	}
	if n := len(abs) + len(longestSocketName); n > maxSocketPath {
		return "", fmt.Errorf("run dir %s is too long: its socket paths would take %d bytes, the limit is %d; use a shorter dir such as /tmp/eovn-demo",
			abs, n, maxSocketPath)
	}
	if _, err := os.Stat(filepath.Join(abs, pidsFile)); err == nil {
		return "", fmt.Errorf("run dir %s: %w; tear it down with StopDir (make demo-down) first", abs, ErrDirInUse)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("create run dir %s: %w", abs, err)
	}
	return abs, nil
}

func (r *Rig) path(name string) string { return filepath.Join(r.Dir, name) }

// env is what every process in the rig gets on top of the caller's environment, so that the
// OVS/OVN tools and daemons find this rig's files and never a system instance's.
func (r *Rig) env() []string {
	var env []string
	for _, k := range []string{"OVS_RUNDIR", "OVN_RUNDIR", "OVS_LOGDIR", "OVN_LOGDIR", "OVS_DBDIR", "OVN_DBDIR"} {
		env = append(env, k+"="+r.Dir)
	}
	return env
}

// Run runs a command inside the rig's namespace (with the rig's environment) and returns its
// combined output. A failure's error includes that output.
func (r *Rig) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", r.Netns, name}, args...)...)
	cmd.Env = append(os.Environ(), r.env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("run %s %s in netns %s: %w: %s",
			name, strings.Join(args, " "), r.Netns, err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Start starts an extra long-running process (edgeovn itself) inside the rig's namespace (or
// the one spec.Netns names), with its output in <dir>/<name>.log. It does not wait for readiness: that is the caller's
// to define. Stop stops it with the rest, or the caller stops it earlier with Process.Stop.
func (r *Rig) Start(ctx context.Context, spec ProcessSpec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	return r.startChild(spec)
}

// startChild starts a process and records it for Stop and StopDir.
func (r *Rig) startChild(spec ProcessSpec) (*Process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil, fmt.Errorf("start %s: rig in %s is stopped", spec.Name, r.Dir)
	}
	netns := spec.Netns
	if netns == "" {
		netns = r.Netns
	}
	p, err := startProcess(startRequest{spec: spec, dir: r.Dir, netns: netns, env: r.env(), detach: r.opts.Detach})
	if err != nil {
		return nil, err
	}
	r.procs = append(r.procs, p)
	r.log.Debug("started", "process", p.Name, "pid", p.PID, "netns", netns)
	return p, appendPidRecord(r.Dir, p)
}

// OnClose registers a teardown that Close runs before it stops the processes (the last
// registered first).
func (r *Rig) OnClose(f func() error) error { return r.onClose(f) }

// onClose registers a teardown that Close runs before it stops the processes.
func (r *Rig) onClose(f func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return fmt.Errorf("rig in %s is stopped", r.Dir)
	}
	r.closers = append(r.closers, f)
	return nil
}

// spawn starts a process and waits until check passes.
func (r *Rig) spawn(ctx context.Context, spec ProcessSpec, check func(context.Context) error) (*Process, error) {
	p, err := r.startChild(spec)
	if err != nil {
		return nil, err
	}
	return p, waitReady(ctx, p, daemonReadyTimeout, check)
}

// DialContext opens a connection from inside the rig's namespace; address must be a literal
// IP and port (such as 127.0.0.1:6443).
func (r *Rig) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return dialInNetns(ctx, r.NetnsPath, network, address)
}

// RESTConfig returns a client configuration for the test process in the root namespace: its
// connections are dialled inside the rig's namespace. Each call returns a fresh copy.
func (r *Rig) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            r.APIServerURL,
		BearerToken:     r.token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		Dial:            r.DialContext,
		QPS:             100,
		Burst:           200,
	}
}

// Kube returns a clientset built on RESTConfig.
func (r *Rig) Kube() kubernetes.Interface { return r.kube }

// Stop is Close for t.Cleanup: it logs what it could not undo instead of returning it.
func (r *Rig) Stop() {
	if err := r.Close(); err != nil {
		r.log.Error("rig teardown incomplete", "dir", r.Dir, "netns", r.Netns, "err", err)
	}
}

// Close tears down the real nodes started with StartRealNode, stops every process by PID in
// reverse start order and waits for each, deletes the namespace and, unless Options.Keep, the
// run directory. Calling it again does nothing.
func (r *Rig) Close() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	procs, closers := r.procs, r.closers
	r.mu.Unlock()

	var errs []error
	// Real nodes first, while edgeovn (a process here) still answers their pods' CNI DEL.
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	for i := len(procs) - 1; i >= 0; i-- {
		errs = append(errs, procs[i].Stop())
	}
	errs = append(errs, deleteNetns(r.Netns))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop rig in %s: %w", r.Dir, err) // keep the dir: its logs explain
	}
	if !r.opts.Keep {
		if err := os.RemoveAll(r.Dir); err != nil {
			return fmt.Errorf("remove rig dir %s: %w", r.Dir, err)
		}
	}
	r.log.Info("rig down", "dir", r.Dir, "netns", r.Netns)
	return nil
}
