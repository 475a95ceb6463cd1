package harness

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testPod is a pod stand-in: a network namespace with eth0, whose veth peer sits on br-int in
// the rig's namespace, bound to the logical switch port of the same name.
type testPod struct {
	name, mac, ip string
	netns         string
}

func (p testPod) hostIf() string { return p.name + "_h" }

func run(t *testing.T, ctx context.Context, r *Rig, name string, args ...string) string {
	t.Helper()
	out, err := r.Run(ctx, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// configureChassis does what edgeovn's node role will do: tell ovn-controller who it is and
// where the SB is, on the userspace datapath.
func configureChassis(t *testing.T, ctx context.Context, r *Rig) {
	t.Helper()
	configureChassisAs(t, ctx, r, "rig-selftest", "127.0.0.1")
}

// configureChassisAs is configureChassis with the chassis name and tunnel endpoint given.
func configureChassisAs(t *testing.T, ctx context.Context, r *Rig, name, encapIP string) {
	t.Helper()
	run(t, ctx, r, "ovs-vsctl", "--db="+r.OVSEndpoint, "set", "Open_vSwitch", ".",
		"external_ids:system-id="+name,
		"external_ids:ovn-remote="+r.SBEndpoint,
		"external_ids:ovn-encap-type=geneve",
		"external_ids:ovn-encap-ip="+encapIP,
		"external_ids:ovn-bridge-datapath-type=netdev")
	waitFor(t, ctx, "ovn-controller creates br-int", func() error {
		_, err := r.Run(ctx, "ovs-vsctl", "--db="+r.OVSEndpoint, "br-exists", "br-int")
		return err
	})
}

// addPod creates the logical switch port and the pod's namespace and veth, and plugs the host
// end into br-int.
func addPod(t *testing.T, ctx context.Context, r *Rig, p testPod) {
	t.Helper()
	run(t, ctx, r, "ovn-nbctl", "--db="+r.NBEndpoint, "lsp-add", "sw0", p.name,
		"--", "lsp-set-addresses", p.name, p.mac+" "+p.ip)
	hostCmd(t, ctx, "ip", "netns", "add", p.netns)
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", p.netns).Run() })
	hostCmd(t, ctx, "ip", "-n", r.Netns, "link", "add", p.hostIf(), "type", "veth",
		"peer", "name", "eth0", "netns", p.netns)
	hostCmd(t, ctx, "ip", "-n", r.Netns, "link", "set", p.hostIf(), "up")
	hostCmd(t, ctx, "ip", "-n", p.netns, "link", "set", "lo", "up")
	hostCmd(t, ctx, "ip", "-n", p.netns, "link", "set", "eth0", "address", p.mac)
	hostCmd(t, ctx, "ip", "-n", p.netns, "addr", "add", p.ip+"/24", "dev", "eth0")
	hostCmd(t, ctx, "ip", "-n", p.netns, "link", "set", "eth0", "up")
	// The kernel leaves TX checksums to an offload the userspace datapath never performs.
	hostCmd(t, ctx, "ip", "netns", "exec", p.netns, "ethtool", "-K", "eth0", "tx", "off")
	run(t, ctx, r, "ovs-vsctl", "--db="+r.OVSEndpoint, "add-port", "br-int", p.hostIf(),
		"--", "set", "Interface", p.hostIf(), "external_ids:iface-id="+p.name)
}

// waitOVNInstalled waits until ovn-controller has bound the pod's port.
func waitOVNInstalled(t *testing.T, ctx context.Context, r *Rig, p testPod) {
	t.Helper()
	waitFor(t, ctx, "ovn-installed on "+p.hostIf(), func() error {
		out, err := r.Run(ctx, "ovs-vsctl", "--db="+r.OVSEndpoint, "--if-exists", "get",
			"Interface", p.hostIf(), "external_ids:ovn-installed")
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(out)) != `"true"` {
			return fmt.Errorf("ovn-installed = %q", strings.TrimSpace(string(out)))
		}
		return nil
	})
}

func runInPod(ctx context.Context, p testPod, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", p.netns, name}, args...)...).CombinedOutput()
}

func hostCmd(t *testing.T, ctx context.Context, name string, args ...string) {
	t.Helper()
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// waitFor polls cond for up to 30 s, failing the test with cond's last error.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
