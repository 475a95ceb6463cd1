package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestUnderlay: a ProviderNetwork on the hosts' eth1 gives each host br-site with eth1 in it,
// the host's eth1 address and its route through the site router moved to br-site while a ping
// from the host through that route runs (its losses counted), and ovn-bridge-mappings
// site:br-site. A Vlan 100 on it and a Subnet with spec.vlan put pods on the site's VLAN: the
// site device reaches a pod at its own address, the pod reaches the site router (its default
// gateway, no router port in OVN), and pods on two hosts talk over the site switch, tagged
// 100, with no Geneve packet between the hosts. An untagged Vlan (id 0) does the same on the
// untagged LAN, and traffic between the two subnets goes through the site router. Deleting
// the ProviderNetwork gives eth1 its address and route back.
func TestUnderlay(t *testing.T) {
	w, ctx := startUnderlay(t)
	h1 := w.cl.hosts[0]
	before := hostView(ctx, t, h1)
	ping := startPinger(t, h1.rig.Netns, siteFar)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	ready := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	sent, lost := ping.stop(t)
	t.Logf("ProviderNetwork created -> Ready on both hosts in %v; host pings through the moved route: %d sent, %d lost", ready.Round(time.Millisecond), sent, lost)
	if lost > 0 {
		t.Errorf("the host lost %d of %d pings while br-site took eth1", lost, sent)
	}
	for i, e := range w.cl.hosts {
		view := hostView(ctx, t, e)
		want := fmt.Sprintf("198.51.100.%d/24", 11+i)
		if !strings.Contains(view, "br-site") || !reMatch(view, `br-site\s+\S+\s+`+want) || reMatch(view, `eth1@\S+\s+\S+\s+\d`) ||
			!strings.Contains(view, "198.18.0.0/15 via 198.51.100.1 dev br-site") {
			t.Errorf("%s: want %s and the route on br-site, eth1 without an address:\n%s", w.cl.names[i], want, view)
		}
		if got := e.vsctl(ctx, t, "get", "Open_vSwitch", ".", "external_ids:ovn-bridge-mappings"); !strings.Contains(got, "site:br-site") {
			t.Errorf("%s: ovn-bridge-mappings %s", w.cl.names[i], got)
		}
		if got := e.vsctl(ctx, t, "get", "Open_vSwitch", ".", "external_ids:ovn-chassis-mac-mappings"); !strings.Contains(got, "site:") {
			t.Errorf("%s: ovn-chassis-mac-mappings %s", w.cl.names[i], got)
		}
	}

	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v100\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: under\nspec:\n  cidrBlock: 192.0.2.0/24\n  gateway: 192.0.2.1\n  vlan: v100\n  excludeIps: [192.0.2.200]\n")
	waitCondition(ctx, t, w.subnets, "under", "Ready", "True", "")
	if got := w.cl.central(ctx, t, "ovn-nbctl", "--db="+w.cl.c.Central.NBEndpoint, "--columns=type,options,tag", "list", "Logical_Switch_Port", "localnet.under"); !strings.Contains(got, "localnet") ||
		!strings.Contains(got, "network_name=site") || !strings.Contains(got, "100") {
		t.Errorf("localnet port: %s", got)
	}
	p1 := w.underlayPod(ctx, t, 0, "u1", "under")
	p2 := w.underlayPod(ctx, t, 1, "u2", "under")
	if !netipIn(p1.IP().String(), "192.0.2.") || !netipIn(p2.IP().String(), "192.0.2.") {
		t.Fatalf("underlay pods' addresses %s %s", p1.IP(), p2.IP())
	}
	retryPing(ctx, t, p1, siteGW.Addr(), "underlay pod -> site router")
	if out, err := w.site.InDevice(ctx, "ping", "-c3", "-i0.2", "-W1", p1.IP().String()); err != nil {
		t.Fatalf("site device -> underlay pod %s: %v\n%s", p1.IP(), err, out)
	}
	if err := podsim.TCPBetween(ctx, "/run/netns/"+w.site.DeviceNetns, p1.Netns, p1.IP()); err != nil {
		t.Fatalf("tcp site device -> pod: %v", err)
	}
	retryPing(ctx, t, p1, p2.IP(), "underlay pod -> underlay pod on the other host")
	tagged := capture(ctx, t, w.site.Switch.Netns, w.site.Leg(h1.rig), "vlan 100 and icmp", func() {
		if _, err := podsim.Ping(ctx, p1, p2.IP()); err != nil {
			t.Error(err)
		}
	})
	// Only the pods' packets count: other ports' (an IPv6 router solicitation of the hosts'
	// join ports) may cross Geneve at any time.
	geneve := capture(ctx, t, h1.rig.Netns, "eth0", geneveOf(p1.IP(), p2.IP()), func() {
		if _, err := podsim.Ping(ctx, p1, p2.IP()); err != nil {
			t.Error(err)
		}
		if err := podsim.TCP(ctx, p1, p2); err != nil {
			t.Error(err)
		}
	})
	// The probe counts: overlay pods on the two hosts do go over Geneve.
	o1, o2 := runPod(ctx, t, w.cl.hosts[0], "o1"), runPod(ctx, t, w.cl.hosts[1], "o2")
	retryPing(ctx, t, o1, o2.IP(), "overlay pod -> overlay pod")
	overlay := capture(ctx, t, h1.rig.Netns, "eth0", geneveOf(o1.IP(), o2.IP()), func() {
		if _, err := podsim.Ping(ctx, o1, o2.IP()); err != nil {
			t.Error(err)
		}
	})
	if overlay < 6 {
		t.Errorf("overlay pods: %d Geneve packets on the underlay, want 6 or more (the probe must see them)", overlay)
	}
	if tagged < 6 || geneve != 0 {
		t.Errorf("pod to pod across hosts: %d ICMP packets tagged 100 on %s's site leg (want 6: 3 requests, 3 replies), %d Geneve packets on its underlay (want 0)", tagged, w.cl.names[0], geneve)
	}

	// Untagged: Vlan id 0 on the same provider, the hosts' own LAN.
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: flat\nspec:\n  id: 0\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: flat\nspec:\n  cidrBlock: 198.51.100.0/24\n  gateway: 198.51.100.1\n  vlan: flat\n  excludeIps: [198.51.100.1..198.51.100.99]\n")
	waitCondition(ctx, t, w.subnets, "flat", "Ready", "True", "")
	p3 := w.underlayPod(ctx, t, 1, "f1", "flat")
	retryPing(ctx, t, p3, siteLAN.Addr(), "untagged underlay pod -> site router")
	retryPing(ctx, t, p3, netipMust("198.51.100.11"), "untagged underlay pod -> host 1's own address")
	_, out := captureOut(ctx, t, w.site.Switch.Netns, w.site.Leg(w.cl.hosts[1].rig), "icmp and host "+p3.IP().String(), func() {
		if _, err := podsim.Ping(ctx, p3, siteLAN.Addr()); err != nil {
			t.Error(err)
		}
	})
	untagged := untaggedICMP(out)
	if untagged < 6 {
		t.Errorf("untagged pod: %d untagged ICMP packets on the site leg, want 6", untagged)
	}
	retryPing(ctx, t, p3, p1.IP(), "untagged pod -> VLAN 100 pod, through the site router")

	// Deleting the ProviderNetwork gives eth1 its address and route back.
	if err := w.pns.Delete(ctx, "site", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "eth1 has its address and route back, br-site gone", func() bool {
		v := hostView(ctx, t, h1)
		return !strings.Contains(v, "br-site") && strings.Contains(v, "198.18.0.0/15 via 198.51.100.1 dev eth1") && reMatch(v, `eth1@\S+\s+\S+\s+198.51.100.11/24`)
	})
	if out, err := h1.rig.Run(ctx, "ping", "-c3", "-i0.2", "-W1", siteFar.String()); err != nil {
		t.Fatalf("host -> %s after the ProviderNetwork's deletion: %v\n%s\nbefore:\n%s", siteFar, err, out, before)
	}
	if got := h1.vsctl(ctx, t, "get", "Open_vSwitch", ".", "external_ids"); strings.Contains(got, "ovn-bridge-mappings") || strings.Contains(got, "ovn-chassis-mac-mappings") {
		t.Errorf("ovn-bridge-mappings or ovn-chassis-mac-mappings left: %s", got)
	}
	_ = harness.SiteNIC
}
