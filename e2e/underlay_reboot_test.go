package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestUnderlayReboot is Kube-OVN #1964 and #2165 on edgeovn: a host whose br-site holds its
// eth1 address and route reboots (every process SIGKILLed, ovs-vswitchd's taps, br-site's
// too, gone with their addresses; the OS network configuration puts the address and route
// back on eth1, as a boot does; Open vSwitch and ovn-controller start again from their
// databases, then edgeovn). After it the address and route are on br-site again, not on
// eth1, the host reaches the site's far network through it, ovn0 works (the host reaches an
// overlay pod on the other host), and an underlay pod on the other host still reaches the
// rebooted host's address on the LAN.
func TestUnderlayReboot(t *testing.T) {
	w, ctx := startUnderlay(t)
	h0, h1 := w.cl.hosts[0], w.cl.hosts[1]
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: flat\nspec:\n  id: 0\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: flat\nspec:\n  cidrBlock: 198.51.100.0/24\n  gateway: 198.51.100.1\n  vlan: flat\n  excludeIps: [198.51.100.1..198.51.100.99]\n")
	waitCondition(ctx, t, w.subnets, "flat", "Ready", "True", "")
	f := w.underlayPod(ctx, t, 1, "f1", "flat")
	o := runPod(ctx, t, h1, "o1")
	retryPing(ctx, t, f, netipMust("198.51.100.11"), "underlay pod -> the host's address on br-site, before the reboot")
	wired := hostView(ctx, t, h0)

	if _, err := h0.rig.Reboot(ctx); err != nil {
		t.Fatal(err)
	}
	// The boot's network configuration: eth1's address and route, as before edgeovn took them.
	for _, args := range [][]string{{"addr", "add", "198.51.100.11/24", "dev", "eth1"}, {"route", "add", "198.18.0.0/15", "via", siteLAN.Addr().String(), "dev", "eth1"}} {
		if out, err := h0.rig.Run(ctx, "ip", args...); err != nil {
			t.Fatalf("boot: ip %v: %v %s", args, err, out)
		}
	}
	p, err := daemon.Start(ctx, h0.rig, daemon.Spec{Name: "edgeovn-boot", Node: w.cl.names[0], BinDir: w.cl.bins,
		Extra: append(append([]string{}, daemonFlags...), w.cl.extra...)})
	if err != nil {
		t.Fatal(err)
	}
	h0.daemon = p
	if err := h0.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, h0.daemonLog())
	}
	eventually(ctx, t, "after the reboot: the address and route on br-site again, eth1 without them", func() bool {
		v := hostView(ctx, t, h0)
		return reMatch(v, `br-site\s+\S+\s+198.51.100.11/24`) && strings.Contains(v, "198.18.0.0/15 via 198.51.100.1 dev br-site") &&
			!reMatch(v, `eth1@\S+\s+\S+\s+\d`)
	})
	if got := hostView(ctx, t, h0); !slices.Equal(sortedLines(got), sortedLines(wired)) {
		t.Errorf("after the reboot the host's addresses and routes differ:\n%s\nbefore:\n%s", got, wired)
	}
	hostPing(ctx, t, h0, siteFar, w.cl.names[0]+" -> the site's far network through br-site, after the reboot")
	hostPing(ctx, t, h0, o.IP(), w.cl.names[0]+" -> overlay pod on the other host through ovn0, after the reboot")
	retryPing(ctx, t, f, netipMust("198.51.100.11"), "underlay pod -> the rebooted host's address on br-site")
}

// sortedLines are s's lines, sorted (ip lists interfaces by index, which a reboot changes).
func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	slices.Sort(lines)
	return lines
}
