package e2e

import (
	"context"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestUnderlayU2O: on TestUnderlay's site, an underlay Subnet (VLAN 100) without
// u2oInterconnection leaves its pods on the site alone: an overlay pod and the hosts do not
// reach them. Turned on, the controller picks the router's address on the underlay switch
// (status.u2oInterconnectionIP, the first free address), a new underlay pod's default gateway
// is that address, and the pod reaches overlay pods on its own host and the other one (ping
// and TCP, both ways), both hosts reach it through ovn0, and it still reaches the site's far
// network through the site router. Turned off again, the router port and policies go, the
// status is cleared, and the overlay pod no longer reaches the underlay pod.
func TestUnderlayU2O(t *testing.T) {
	w, ctx := startUnderlay(t)
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v100\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: under\nspec:\n  cidrBlock: 192.0.2.0/24\n  gateway: 192.0.2.1\n  vlan: v100\n  excludeIps: [192.0.2.2..192.0.2.9, 192.0.2.200]\n")
	waitCondition(ctx, t, w.subnets, "under", "Ready", "True", "")
	h0, h1 := w.cl.hosts[0], w.cl.hosts[1]
	o0, o1 := runPod(ctx, t, h0, "o0"), runPod(ctx, t, h1, "o1")

	off := w.underlayPod(ctx, t, 0, "uoff", "under")
	retryPing(ctx, t, off, siteGW.Addr(), "underlay pod (u2o off) -> site router")
	noPing(ctx, t, off, o1.IP(), "underlay pod -> overlay pod without u2oInterconnection")
	noPing(ctx, t, o1, off.IP(), "overlay pod -> underlay pod without u2oInterconnection")
	hostUnreachable(ctx, t, h0, off.IP(), "host -> underlay pod without u2oInterconnection")

	w.patchSubnet(ctx, t, "under", `{"spec":{"u2oInterconnection":true}}`)
	st := w.waitU2O(ctx, t, "under", func(st kubeovn.SubnetStatus) bool { return st.U2OInterconnectionIP != "" })
	// .2-.9 are excluded and uoff holds .10: the first free address is .11.
	if st.U2OInterconnectionIP != "192.0.2.11" || off.IP().String() != "192.0.2.10" || st.U2OInterconnectionVPC != "ovn-cluster" || st.U2OInterconnectionMAC == "" {
		t.Errorf("u2o status %q %q %q: want 192.0.2.11 (the first address not the gateway, excluded or held), ovn-cluster and a MAC",
			st.U2OInterconnectionIP, st.U2OInterconnectionMAC, st.U2OInterconnectionVPC)
	}
	nbctl := func(args ...string) string {
		return w.cl.central(ctx, t, "ovn-nbctl", append([]string{"--db=" + w.cl.c.Central.NBEndpoint}, args...)...)
	}
	if got := nbctl("--columns=networks,mac", "list", "Logical_Router_Port", "ovn-cluster-under"); !strings.Contains(got, "192.0.2.11/24") ||
		!strings.Contains(got, st.U2OInterconnectionMAC) {
		t.Errorf("u2o router port: %s", got)
	}
	if got := nbctl("get", "NB_Global", ".", "options:use_ct_inv_match"); !strings.Contains(got, "false") {
		t.Errorf("NB_Global use_ct_inv_match %q, want false while a Subnet has u2oInterconnection", got)
	}
	policies := nbctl("lr-policy-list", "ovn-cluster")
	for _, want := range []string{"29400 *ip4.dst == 192.0.2.0/24 *allow", "29000 *ip4.src == 192.0.2.0/24 *reroute *192.0.2.1"} {
		if !reMatch(policies, want) {
			t.Errorf("router policies lack %q:\n%s", want, policies)
		}
	}

	u := w.underlayPod(ctx, t, 0, "uon", "under")
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", u.NetnsName(), "ip", "route", "show", "default").CombinedOutput(); err != nil || !strings.Contains(string(out), "via 192.0.2.11") {
		t.Errorf("underlay pod's default route: %q %v, want via the u2o address 192.0.2.11", out, err)
	}
	retryPing(ctx, t, u, o0.IP(), "underlay pod -> overlay pod on its host (u2o)")
	retryPing(ctx, t, u, o1.IP(), "underlay pod -> overlay pod on the other host (u2o)")
	retryPing(ctx, t, o1, u.IP(), "overlay pod on the other host -> underlay pod (u2o)")
	if err := podsim.TCP(ctx, o1, u); err != nil {
		t.Errorf("tcp overlay pod -> underlay pod: %v", err)
	}
	if err := podsim.TCP(ctx, u, o1); err != nil {
		t.Errorf("tcp underlay pod -> overlay pod: %v", err)
	}
	// o1's reply is routed on h1 and crosses the site's LAN tagged 100: with h1's chassis MAC
	// (ovn-chassis-mac-mappings), not the router port's MAC, which every host would send.
	mapping := h1.vsctl(ctx, t, "get", "Open_vSwitch", ".", "external_ids:ovn-chassis-mac-mappings")
	_, h1MAC, _ := strings.Cut(strings.Trim(strings.TrimSpace(mapping), `"`), "site:")
	_, wire := captureOut(ctx, t, w.site.Switch.Netns, w.site.Leg(h1.rig), "vlan 100 and icmp", func() {
		if _, err := podsim.Ping(ctx, u, o1.IP()); err != nil {
			t.Error(err)
		}
	})
	if h1MAC == "" || !strings.Contains(wire, h1MAC+" > ") || strings.Contains(wire, st.U2OInterconnectionMAC+" >") {
		t.Errorf("routed replies on %s's site leg: want from its chassis MAC %q (mapping %s), never from the router port's %s:\n%s",
			w.cl.names[1], h1MAC, mapping, st.U2OInterconnectionMAC, wire)
	}
	for i, h := range w.cl.hosts {
		hostPing(ctx, t, h, u.IP(), w.cl.names[i]+" -> underlay pod (u2o, through ovn0)")
	}
	retryPing(ctx, t, u, siteFar, "underlay pod -> the site's far network, through the site router (u2o reroute)")
	retryPing(ctx, t, u, siteDevice.Addr(), "underlay pod -> site device, on the LAN")

	// Bad input: the site router's address as the u2o address is refused naming the field;
	// what is applied stays.
	w.patchSubnet(ctx, t, "under", `{"spec":{"u2oInterconnectionIP":"192.0.2.1"}}`)
	waitCondition(ctx, t, w.subnets, "under", "Validated", "False", "spec.u2oInterconnectionIP 192.0.2.1: 192.0.2.1 is spec.gateway")
	waitCondition(ctx, t, w.subnets, "under", "Ready", "True", "")
	if st := w.waitU2O(ctx, t, "under", func(kubeovn.SubnetStatus) bool { return true }); st.U2OInterconnectionIP != "192.0.2.11" {
		t.Errorf("after a refused u2oInterconnectionIP: status %q, want 192.0.2.11 kept", st.U2OInterconnectionIP)
	}
	retryPing(ctx, t, o1, u.IP(), "overlay pod -> underlay pod after a refused u2oInterconnectionIP")
	// Pinned to a free address: the router port moves there.
	w.patchSubnet(ctx, t, "under", `{"spec":{"u2oInterconnectionIP":"192.0.2.50"}}`)
	w.waitU2O(ctx, t, "under", func(st kubeovn.SubnetStatus) bool { return st.U2OInterconnectionIP == "192.0.2.50" })
	eventually(ctx, t, "u2o router port at 192.0.2.50", func() bool {
		return strings.Contains(nbctl("--columns=networks", "list", "Logical_Router_Port", "ovn-cluster-under"), "192.0.2.50/24")
	})

	w.patchSubnet(ctx, t, "under", `{"spec":{"u2oInterconnection":false,"u2oInterconnectionIP":null}}`)
	w.waitU2O(ctx, t, "under", func(st kubeovn.SubnetStatus) bool { return st.U2OInterconnectionIP == "" })
	eventually(ctx, t, "u2o router port and policies gone", func() bool {
		p := nbctl("lr-policy-list", "ovn-cluster")
		return !strings.Contains(nbctl("--columns=name", "list", "Logical_Router_Port"), "ovn-cluster-under") &&
			!strings.Contains(p, "192.0.2.0/24")
	})
	noPing(ctx, t, o1, u.IP(), "overlay pod -> underlay pod after u2oInterconnection was turned off")
	if got := nbctl("get", "NB_Global", ".", "options"); strings.Contains(got, "use_ct_inv_match") {
		t.Errorf("NB_Global options %s: use_ct_inv_match left after the last u2oInterconnection went", got)
	}
	retryPing(ctx, t, off, siteGW.Addr(), "underlay pod -> site router, after u2o off")
}

// noPing checks that from does not reach to (3 pings, none answered).
func noPing(ctx context.Context, t *testing.T, from *podsim.Sandbox, to netip.Addr, what string) {
	t.Helper()
	if out, err := podsim.Ping(ctx, from, to); err == nil {
		t.Errorf("%s: reached %s, want unreachable\n%s", what, to, out)
	}
}

func hostUnreachable(ctx context.Context, t *testing.T, e *env, to netip.Addr, what string) {
	t.Helper()
	if out, err := e.rig.Run(ctx, "ping", "-c3", "-i0.2", "-W1", to.String()); err == nil {
		t.Errorf("%s: reached %s, want unreachable\n%s", what, to, out)
	}
}

// hostPing pings from the host until it answers (20 s).
func hostPing(ctx context.Context, t *testing.T, e *env, to netip.Addr, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := e.rig.Run(ctx, "ping", "-c3", "-i0.2", "-W1", to.String())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s (%s): %v\n%s", what, to, err, out)
			return
		}
	}
}

func (w *underlayWorld) patchSubnet(ctx context.Context, t *testing.T, name, patch string) {
	t.Helper()
	if _, err := w.subnets.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch subnet %s %s: %v", name, patch, err)
	}
}

// waitU2O waits until the Subnet's status satisfies ok and returns it.
func (w *underlayWorld) waitU2O(ctx context.Context, t *testing.T, name string, ok func(kubeovn.SubnetStatus) bool) kubeovn.SubnetStatus {
	t.Helper()
	var st kubeovn.SubnetStatus
	eventually(ctx, t, "subnet "+name+" u2o status", func() bool {
		u, err := w.subnets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		sn, err := kubeovn.FromUnstructured(u)
		if err != nil {
			return false
		}
		st = sn.Status
		return ok(st)
	})
	t.Logf("subnet %s: u2oInterconnectionIP %q MAC %q VPC %q", name, st.U2OInterconnectionIP, st.U2OInterconnectionMAC, st.U2OInterconnectionVPC)
	return st
}
