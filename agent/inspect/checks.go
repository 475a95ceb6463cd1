package inspect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/cni/protocol"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// Checks are the doctor's checks, in the order a person would go: the local datapath, the
// chassis, the host's ports, the CNI files and daemon, then the cluster.
func (h *Host) Checks() []Check {
	ovsRun, ovnRun := health.DefaultRunDirs()
	return []Check{
		{"open_vswitch database", h.checkOVSDB},
		{"ovs-vswitchd", daemonCheck(health.Daemon{Name: "ovs-vswitchd", RunDir: ovsRun}, "systemctl restart openvswitch-switch (journalctl -u ovs-vswitchd says why it stopped)")},
		{"ovn-controller", daemonCheck(health.Daemon{Name: "ovn-controller", RunDir: ovnRun}, "systemctl restart ovn-host (journalctl -u ovn-controller says why it stopped)")},
		{"chassis config", h.checkChassisConfig},
		{"chassis registered", h.checkChassisRegistered},
		{"br-int", h.checkBridge},
		{"ovn0", h.checkHostInterface},
		{"host routes", h.checkHostRoutes},
		{"pod bindings", h.checkPodBindings},
		{"cni config", h.checkConf},
		{"cni plugins", h.checkPlugins},
		{"edgeovn daemon", h.checkDaemon},
		{"kubernetes api", h.checkKube},
		{"ovn northbound", h.checkNB},
		{"ipam and northbound", h.checkAgreement},
	}
}

func (h *Host) checkOVSDB(ctx context.Context) Result {
	ovs, err := h.OVS(ctx)
	if err == nil {
		err = ovs.Ping(ctx)
	}
	if err != nil {
		return fail("systemctl start openvswitch-switch, or set ovs-db to this host's Open_vSwitch database",
			"not reachable at %s: %v", h.Cfg.OVSEndpoint, err)
	}
	return pass("answers at %s", h.Cfg.OVSEndpoint)
}

func daemonCheck(d health.Daemon, fix string) func(context.Context) Result {
	return func(ctx context.Context) Result {
		if err := d.Answers(ctx); err != nil {
			return fail(fix, "%v", err)
		}
		return pass("answers on its control socket in %s", d.RunDir)
	}
}

// checkChassisConfig: the Open_vSwitch row tells ovn-controller who this chassis is, as
// edgeovn configured it.
func (h *Host) checkChassisConfig(ctx context.Context) Result {
	ovs, err := h.OVS(ctx)
	if err != nil {
		return skip("no Open_vSwitch database")
	}
	cfg, err := ovs.OVNConfig(ctx)
	if err != nil {
		return fail("check the Open_vSwitch database", "%v", err)
	}
	const fix = "start or restart edgeovn: it writes these keys (systemctl restart edgeovn)"
	want := map[string]string{vswitch.KeySystemID: h.Cfg.NodeName, vswitch.KeyOVNRemote: node.OVNRemote(h.Cfg.SBEndpoints)}
	if h.Cfg.EncapIP.IsValid() {
		want[vswitch.KeyEncapIP] = h.Cfg.EncapIP.String()
	}
	for _, k := range []string{vswitch.KeySystemID, vswitch.KeyOVNRemote, vswitch.KeyEncapIP} {
		got := cfg[k]
		if w, ok := want[k]; (ok && got != w) || got == "" {
			return fail(fix, "external_ids:%s is %q, want %q", k, got, w)
		}
	}
	return pass("system-id %s, encap ip %s, ovn-remote %s", cfg[vswitch.KeySystemID], cfg[vswitch.KeyEncapIP], cfg[vswitch.KeyOVNRemote])
}

// checkChassisRegistered: ovn-controller registered this chassis in the southbound database
// with the encapsulation address the Open_vSwitch row gives.
func (h *Host) checkChassisRegistered(ctx context.Context) Result {
	ovs, err := h.OVS(ctx)
	if err != nil {
		return skip("no Open_vSwitch database")
	}
	cfg, err := ovs.OVNConfig(ctx)
	if err != nil {
		return fail("check the Open_vSwitch database", "%v", err)
	}
	name, encapIP := cfg[vswitch.KeySystemID], cfg[vswitch.KeyEncapIP]
	sb, err := h.SB(ctx)
	if err != nil {
		return fail("check that ovn-central runs and ovn-sb points at its southbound database", "southbound not reachable at %v: %v", h.Cfg.SBEndpoints, err)
	}
	ch, ok, err := sb.Chassis(ctx, name)
	switch {
	case err != nil:
		return fail("check the southbound database", "%v", err)
	case !ok:
		return fail("ovn-controller has not registered: check it runs and reaches "+node.OVNRemote(h.Cfg.SBEndpoints)+" (journalctl -u ovn-controller)",
			"no chassis %q in the southbound database", name)
	}
	for _, e := range ch.Encaps {
		if e.IP == encapIP {
			return pass("chassis %s, %s tunnel endpoint %s", ch.Name, e.Type, e.IP)
		}
	}
	return fail("systemctl restart ovn-host, so that ovn-controller registers the current address",
		"chassis %s registered tunnel endpoints %v, the host's encap ip is %s", ch.Name, ch.Encaps, encapIP)
}

func (h *Host) checkBridge(ctx context.Context) Result {
	ovs, err := h.OVS(ctx)
	if err != nil {
		return skip("no Open_vSwitch database")
	}
	const fix = "systemctl restart edgeovn (it creates br-int), and check ovs-vswitchd above"
	if err := ovs.BridgePresent(ctx, node.Bridge); err != nil {
		return fail(fix, "%v", err)
	}
	if _, err := netlink.LinkByName(node.Bridge); err != nil {
		return fail(fix, "in the database but no network device %s: %v", node.Bridge, err)
	}
	return pass("in the Open_vSwitch database and the kernel")
}

// checkHostInterface: ovn0 is edgeovn's port for this node, bound by ovn-controller, up and
// addressed in the kernel.
func (h *Host) checkHostInterface(ctx context.Context) Result {
	ovs, err := h.OVS(ctx)
	if err != nil {
		return skip("no Open_vSwitch database")
	}
	const fix = "systemctl restart edgeovn; if it stays missing, check that the controller gave this node its join port (edgeovn status shows the leader; kubectl get node -o yaml shows ovn.kubernetes.io/ip_address)"
	ids, ok, err := ovs.InterfaceExternalIDs(ctx, node.HostInterface)
	switch {
	case err != nil:
		return fail(fix, "%v", err)
	case !ok:
		return fail(fix, "no interface %s in the Open_vSwitch database", node.HostInterface)
	case ids["iface-id"] != "node-"+h.Cfg.NodeName:
		return fail(fix, "iface-id is %q, want %q", ids["iface-id"], "node-"+h.Cfg.NodeName)
	case ids[vswitch.KeyOVNInstalled] != "true":
		return fail("check ovn-controller and the chassis above: it has not bound ovn0", "not bound by ovn-controller (no ovn-installed)")
	}
	link, err := netlink.LinkByName(node.HostInterface)
	if err != nil {
		return fail(fix, "no network device %s: %v", node.HostInterface, err)
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		return fail(fix, "network device %s is down", node.HostInterface)
	}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_ALL)
	if err != nil || len(addrs) == 0 {
		return fail(fix, "network device %s has no address (%v)", node.HostInterface, err)
	}
	return pass("bound to node-%s, up, %s", h.Cfg.NodeName, addrs[0].IPNet)
}

func (h *Host) checkConf(context.Context) Result {
	dir := h.Cfg.CNIConfDir
	first, err := loadedConf(dir)
	const fix = "systemctl restart edgeovn (it writes " + node.ConfName + ")"
	switch {
	case err != nil:
		return fail(fix, "%v", err)
	case first == "":
		return fail(fix, "no CNI config in %s", dir)
	case first != node.ConfName:
		return fail(fmt.Sprintf("move %s out of %s (containerd loads the first file by name)", first, dir),
			"containerd loads %s, not %s", filepath.Join(dir, first), node.ConfName)
	}
	if err := checkConfList(filepath.Join(dir, first), node.PluginName, h.Cfg.CNISocket); err != nil {
		return fail(fix, "%v", err)
	}
	return pass("containerd loads %s", filepath.Join(dir, first))
}

func (h *Host) checkPlugins(context.Context) Result {
	if missing := missingExecutables(h.Cfg.CNIBinDir, node.PluginName, "loopback"); len(missing) > 0 {
		return fail("systemctl restart edgeovn (it installs them where none exist)",
			"missing in %s: %s", h.Cfg.CNIBinDir, joinOr(missing, ""))
	}
	return pass("edgeovn and loopback in %s", h.Cfg.CNIBinDir)
}

// checkDaemon asks the daemon for CNI STATUS, as containerd does.
func (h *Host) checkDaemon(ctx context.Context) Result {
	err := cniStatus(ctx, h.Cfg.CNISocket)
	var notReady *protocol.Error
	switch {
	case errors.As(err, &notReady) && notReady.Code == protocol.CodePluginNotAvailable:
		return fail("fix what it names (the checks above say how); it reports ready by itself within seconds",
			"answers, not ready: %s", notReady.Details)
	case err != nil:
		return fail("systemctl status edgeovn; journalctl -u edgeovn says why it does not answer", "%v", err)
	}
	return pass("answers CNI STATUS on %s: ready", h.Cfg.CNISocket)
}
