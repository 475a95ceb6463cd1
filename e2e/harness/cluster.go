package harness

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// ClusterOptions configures a Cluster: the rig's Options (binaries, Keep, Log; Dir is the
// cluster's root, each member gets a directory below it), the number of hosts and where the
// OVN databases run.
type ClusterOptions struct {
	Options
	Hosts int
	// Databases is the OVN databases' layout: CentralDBs (default) or RaftDBs.
	Databases DBLayout
	// RaftMembers is how many hosts (the first ones) carry the raft clusters with RaftDBs
	// (0: 3, or every host when there are fewer).
	RaftMembers int
}

// Cluster is several simulated hosts on one machine, as RIG.md's "Several hosts" describes:
// a central (OVN NB and SB ovsdb-servers on TCP, ovn-northd, etcd, kube-apiserver) and N
// hosts (each its own Open_vSwitch database, ovs-vswitchd on the userspace datapath and
// ovn-controller, with OVS_RUNDIR and OVN_RUNDIR its own), every member in its own network
// namespace, joined by a Linux bridge in another. Each member is a Rig, so everything a test
// does with a single-host rig (Run, Start, daemon.Start, RESTConfig) it does with a host.
type Cluster struct {
	// Dir holds one run directory per member: central/, h1/, h2/, ...
	Dir string
	// Central runs the OVN central (CentralDBs) and the Kubernetes API; its NBEndpoint and
	// SBEndpoint are unix sockets in its namespace (with RaftDBs, the members' TCP list, as
	// the hosts have it), its NodeIP the underlay address the hosts reach.
	Central *Rig
	// Hosts are the simulated hosts. Each one's NodeIP is its underlay address, held by its
	// br-phy (an OVS netdev bridge, as userspace Geneve needs), with the default route through
	// the central; its NBEndpoint and SBEndpoint are the central's on TCP, its Kube() the
	// central's clientset.
	Hosts []*Rig

	opts     ClusterOptions
	underlay *underlay
	sites    []*Site // AddSite's
}

// OVN's database ports on the central, as ovn-central listens on them.
const (
	nbTCPPort = 6641
	sbTCPPort = 6642
)

// phyBridge is the OVS bridge that owns a host's underlay address.
const phyBridge = "br-phy"

// StartCluster brings up the central, the underlay and the hosts, each waited for. On failure
// everything started is torn down again.
func StartCluster(ctx context.Context, o ClusterOptions) (*Cluster, error) {
	if o.Hosts < 1 || o.Hosts > 200 {
		return nil, fmt.Errorf("start cluster: %d hosts: want 1..200", o.Hosts)
	}
	if o.Detach {
		return nil, errors.New("start cluster: Detach is not supported (tear a cluster down with Close)")
	}
	if err := o.validateLayout(); err != nil {
		return nil, err
	}
	if err := preflightCluster(o.Options); err != nil {
		return nil, err
	}
	dir, err := prepareDir(o.Dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, opts: o}
	if err := c.start(ctx); err != nil {
		if cerr := c.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	o.logger().Info("cluster up", "dir", dir, "hosts", len(c.Hosts), "central", c.Central.Netns, "apiserver", c.Central.PodAPIServerURL)
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	var err error
	if c.underlay, err = newUnderlay(ctx); err != nil {
		return err
	}
	if c.Central, err = c.newMember("central", centralIP); err != nil {
		return err
	}
	if err := c.startCentral(ctx); err != nil {
		return err
	}
	for i := range c.opts.Hosts {
		h, err := c.newMember("h"+strconv.Itoa(i+1), hostIP(i))
		if err != nil {
			return err
		}
		c.Hosts = append(c.Hosts, h)
		if err := c.startHost(ctx, h); err != nil {
			return err
		}
	}
	if n := c.opts.raftMembers(); n > 0 {
		return c.startRaft(ctx, n)
	}
	return nil
}

// newMember makes a member's rig: its directory below the cluster's and a fresh namespace
// name, with addr as its NodeIP.
func (c *Cluster) newMember(name string, addr netip.Addr) (*Rig, error) {
	dir := filepath.Join(c.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run dir %s: %w", dir, err)
	}
	ns, err := newNetnsName()
	if err != nil {
		return nil, err
	}
	o := c.opts.Options
	o.Dir = dir
	r := newRig(dir, ns, o)
	r.NodeIP = addr
	r.PodAPIServerURL = "https://" + netip.AddrPortFrom(centralIP, apiServerPort).String()
	return r, nil
}

// joinUnderlay creates the member's namespace and connects it to the underlay bridge.
func (c *Cluster) joinUnderlay(ctx context.Context, r *Rig, leg string) error {
	if err := createNetns(ctx, r.Netns); err != nil {
		return err
	}
	if err := os.WriteFile(r.path(netnsFile), []byte(r.Netns+"\n"), 0o644); err != nil {
		return fmt.Errorf("record netns name: %w", err)
	}
	return c.underlay.attach(ctx, r.Netns, leg)
}

// startCentral: the central's eth0 is a plain kernel endpoint whose packets OVS reads on the
// hosts, so its TX checksum offload is off (RIG.md: TCP through the userspace datapath).
func (c *Cluster) startCentral(ctx context.Context) error {
	r := c.Central
	if err := c.joinUnderlay(ctx, r, "central"); err != nil {
		return err
	}
	pfx := netip.PrefixFrom(centralIP, underlayNet.Bits()).String()
	if err := ipSteps(ctx, r.Netns, [][]string{{"addr", "add", pfx, "dev", uplinkName}, {"link", "set", uplinkName, "up"}}); err != nil {
		return err
	}
	if _, err := r.Run(ctx, "ethtool", "-K", uplinkName, "tx", "off"); err != nil {
		return fmt.Errorf("central: %w", err)
	}
	if n := c.opts.raftMembers(); n > 0 {
		r.NBEndpoint, r.SBEndpoint = raftEndpoints(raftNB, n), raftEndpoints(raftSB, n)
	} else {
		r.log.Info("starting the OVN central", "netns", r.Netns)
		err := r.startCentral(ctx, map[ovsdbSpec]string{
			nbDB: fmt.Sprintf("ptcp:%d:%s", nbTCPPort, centralIP),
			sbDB: fmt.Sprintf("ptcp:%d:%s", sbTCPPort, centralIP),
		})
		if err != nil {
			return err
		}
	}
	r.log.Info("starting etcd and kube-apiserver", "netns", r.Netns)
	if err := r.startKube(ctx); err != nil {
		return err
	}
	return r.writeEnvFile()
}

// startHost brings up one host: its namespace on the underlay, arp_ignore=1 (or the kernel
// also answers ARP for br-phy's address with the veth's MAC), its Open vSwitch with br-phy
// owning the underlay address, ovn-controller, and a kubeconfig for the central API server.
// Its NB and SB endpoints are the central's, or the raft members' list.
func (c *Cluster) startHost(ctx context.Context, h *Rig) error {
	central := c.Central
	h.NBEndpoint = fmt.Sprintf("tcp:%s", netip.AddrPortFrom(centralIP, nbTCPPort))
	h.SBEndpoint = fmt.Sprintf("tcp:%s", netip.AddrPortFrom(centralIP, sbTCPPort))
	if n := c.opts.raftMembers(); n > 0 {
		h.NBEndpoint, h.SBEndpoint = raftEndpoints(raftNB, n), raftEndpoints(raftSB, n)
	}
	h.APIServerURL = central.PodAPIServerURL
	h.token, h.kube = central.token, central.kube
	if err := c.joinUnderlay(ctx, h, filepath.Base(h.Dir)); err != nil {
		return err
	}
	for _, k := range []string{"all", "default"} {
		if _, err := h.Run(ctx, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/conf/"+k+"/arp_ignore"); err != nil {
			return fmt.Errorf("host %s: %w", filepath.Base(h.Dir), err)
		}
	}
	h.log.Info("starting a host's Open vSwitch and ovn-controller", "netns", h.Netns, "ip", h.NodeIP)
	if err := h.startHostOVS(ctx, h.addPhyBridge); err != nil {
		return err
	}
	if err := h.writeKubeconfig(); err != nil {
		return err
	}
	return h.writeEnvFile()
}

// addPhyBridge puts the host's underlay leg on br-phy (netdev) and the underlay address and
// default route on br-phy: with the address on the veth itself, native tunnel routing fails.
// After a Reboot the bridge is in the database already, and its new tap has no address.
func (r *Rig) addPhyBridge(ctx context.Context) error {
	_, err := r.Run(ctx, "ovs-vsctl", "--db="+r.OVSEndpoint, "--may-exist", "add-br", phyBridge,
		"--", "set", "bridge", phyBridge, "datapath_type=netdev", "--", "--may-exist", "add-port", phyBridge, uplinkName)
	if err != nil {
		return fmt.Errorf("create %s: %w", phyBridge, err)
	}
	if err := waitLink(ctx, r.Netns, phyBridge); err != nil {
		return err
	}
	return ipSteps(ctx, r.Netns, [][]string{
		{"link", "set", uplinkName, "up"},
		{"addr", "add", netip.PrefixFrom(r.NodeIP, underlayNet.Bits()).String(), "dev", phyBridge},
		{"link", "set", phyBridge, "up"},
		{"route", "add", "default", "via", centralIP.String(), "dev", phyBridge},
	})
}

// PhyBridge is the OVS bridge that holds a Cluster host's underlay address.
func PhyBridge() string { return phyBridge }

// UnderlayPrefix is the Cluster's underlay network.
func UnderlayPrefix() netip.Prefix { return underlayNet }

// UnderlayGateway is the Cluster hosts' default gateway (the central's underlay address).
func UnderlayGateway() netip.Addr { return centralIP }

// Stop is Close for t.Cleanup: it logs what it could not undo instead of returning it.
func (c *Cluster) Stop() {
	if err := c.Close(); err != nil {
		c.opts.logger().Error("cluster teardown incomplete", "dir", c.Dir, "err", err)
	}
}

// Close stops the hosts (each one's processes by PID, edgeovn included, in reverse start
// order), then the central, then deletes the underlay, and removes the cluster's directory
// unless Options.Keep. Calling it again does nothing.
func (c *Cluster) Close() error {
	errs := []error{c.closeSites()}
	for i := len(c.Hosts) - 1; i >= 0; i-- {
		errs = append(errs, c.Hosts[i].Close())
	}
	if c.Central != nil {
		errs = append(errs, c.Central.Close())
	}
	errs = append(errs, c.underlay.close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop cluster in %s: %w", c.Dir, err)
	}
	if !c.opts.Keep {
		if err := os.RemoveAll(c.Dir); err != nil {
			return fmt.Errorf("remove cluster dir %s: %w", c.Dir, err)
		}
	}
	return nil
}

// clusterTools are the programs from $PATH a Cluster runs beyond a single rig's.
var clusterTools = []string{"ethtool", "sh"}

// PreflightCluster is Preflight for StartCluster.
func PreflightCluster() error { return preflightCluster(Options{}) }

func preflightCluster(o Options) error {
	err := preflight(o)
	var missing []error
	for _, t := range clusterTools {
		if _, lerr := exec.LookPath(t); lerr != nil {
			missing = append(missing, fmt.Errorf("cluster preflight: no %s in PATH", t))
		}
	}
	return errors.Join(append([]error{err}, missing...)...)
}

// AddHost starts one more host on the running cluster, as a host that joins later: its own
// namespace on the underlay, Open vSwitch and ovn-controller, the cluster's NB and SB
// endpoints; it is never a raft member. Close stops it with the others. Not safe to call
// concurrently with itself or Close.
func (c *Cluster) AddHost(ctx context.Context) (*Rig, error) {
	i := len(c.Hosts)
	h, err := c.newMember("h"+strconv.Itoa(i+1), hostIP(i))
	if err != nil {
		return nil, err
	}
	c.Hosts = append(c.Hosts, h)
	if err := c.startHost(ctx, h); err != nil {
		return nil, fmt.Errorf("add host %d: %w", i+1, err)
	}
	return h, nil
}
