package e2e

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestOvnNatGatewayFailover: on three hosts of TestUnderlay's site, the first two named in
// external-gw-nodes, vpc1's external port has two gateway chassis (priority 100 the first,
// 99 the second), the first holds it, and BFD runs over Geneve (userspace datapath) from the
// second to the first and to the third (the pod's host, a chassis the router's traffic comes
// from). A FIP without a pod port (v4Ip and vpc: its NAT happens on the gateway chassis) maps
// an EIP to a pod on the third host. Killing the active host's ovn-controller alone moves
// nothing (BFD and the flows live in ovs-vswitchd): the FIP keeps answering. Killing its
// ovs-vswitchd too (the host's datapath gone): BFD finds it down, the second host takes the
// port, and the site reaches the FIP again; the outage (lost pings every 10 ms) is logged.
// With two hosts only, OVN does not fail over: the backup, its one tunnel down, cannot tell
// the active host's death from its own isolation and stays passive (measured; docs/nat.md).
func TestOvnNatGatewayFailover(t *testing.T) {
	w, ctx := startUnderlayHosts(t, 3)
	dyn := w.dyn
	eips, fips := dyn.Resource(kubeovn.OvnEipResource), dyn.Resource(kubeovn.OvnFipResource)
	active, backup := w.cl.names[0], w.cl.names[1]
	w.natExternalNetwork(ctx, t, active+", "+backup)
	w.natLinkedVpc(ctx, t, dyn.Resource(kubeovn.VpcResource))
	nbctl := func(args ...string) string {
		return w.cl.central(ctx, t, "ovn-nbctl", append([]string{"--db=" + w.cl.c.Central.NBEndpoint}, args...)...)
	}
	for prio, want := range map[string]string{"100": active, "99": backup} {
		if got := strings.TrimSpace(nbctl("--bare", "--columns=chassis_name", "find", "Gateway_Chassis", "priority="+prio)); got != want {
			t.Errorf("gateway chassis of priority %s: %q, want %s", prio, got, want)
		}
	}

	p1 := w.underlayPod(ctx, t, 2, "p1", "net1")
	applyYAML(ctx, t, eips, "kind: OvnEip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: eip-fip\nspec:\n  externalSubnet: external\n")
	fipIP := netip.MustParseAddr(waitNatReady(ctx, t, eips, "eip-fip")["v4Ip"].(string))
	applyYAML(ctx, t, fips, "kind: OvnFip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: fip1\nspec:\n  ovnEip: eip-fip\n  v4Ip: "+
		p1.IP().String()+"\n  vpc: vpc1\n")
	waitNatReady(ctx, t, fips, "fip1")
	device := &podsim.Sandbox{Netns: w.site.DeviceNetns, Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "site-device"}}}
	retryPing(ctx, t, device, fipIP, "site -> the pod on the third host at its EIP")
	eventually(ctx, t, "the gateway port on "+active, func() bool { return w.gatewayHolder(ctx, t) == active })
	eventually(ctx, t, "BFD up from "+backup+" to "+active+" and to "+w.cl.names[2]+" over Geneve", func() bool {
		return strings.Count(w.bfd(ctx, t, 1), "forwarding=true") == 2
	})
	t.Logf("BFD on %s: %s", backup, w.bfd(ctx, t, 1))

	// ovn-controller alone: nothing moves, the FIP keeps answering.
	ping := startPinger(t, w.site.DeviceNetns, fipIP)
	w.kill(t, 0, "ovn-controller")
	time.Sleep(5 * time.Second)
	sent, lost := ping.stop(t)
	t.Logf("the active host's ovn-controller killed: %d of %d pings lost over 5 s; the port on %s", lost, sent, w.gatewayHolder(ctx, t))
	retryPing(ctx, t, device, fipIP, "site -> the EIP with the active host's ovn-controller gone")

	// The active host's datapath gone: the second host takes the port.
	started := time.Now()
	ping = startPinger(t, w.site.DeviceNetns, fipIP)
	killed := time.Now()
	w.kill(t, 0, "ovs-vswitchd")
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	eventually(fctx, t, "the gateway port moved to "+backup, func() bool { return w.gatewayHolder(ctx, t) == backup })
	moved := time.Since(killed)
	retryPing(ctx, t, device, fipIP, "site -> the EIP through "+backup+" after the failover")
	time.Sleep(time.Second)
	sent, lost = ping.stop(t)
	span := time.Since(started)
	t.Logf("failover: the port on %s %v after the kill; %d of %d pings lost over %v: an outage of about %v (lost/sent of the span)",
		backup, moved.Round(10*time.Millisecond), lost, sent, span.Round(10*time.Millisecond), (span * time.Duration(lost) / time.Duration(max(sent, 1))).Round(10*time.Millisecond))
	t.Logf("BFD on %s after the failover: %s", backup, w.bfd(ctx, t, 1))
	if got := strings.TrimSpace(nbctl("--bare", "--columns=chassis_name", "find", "Gateway_Chassis", "priority=100")); got != active {
		t.Errorf("the failover changed northbound's gateway chassis: priority 100 is %q, want %s (OVN moves the port, edgeovn writes nothing)", got, active)
	}
}

// gatewayHolder is the chassis that holds vpc1's gateway port (the southbound binding of
// cr-vpc1-external), "" when none does.
func (w *underlayWorld) gatewayHolder(ctx context.Context, t *testing.T) string {
	t.Helper()
	sbctl := func(args ...string) string {
		return strings.TrimSpace(w.cl.central(ctx, t, "ovn-sbctl", append([]string{"--db=" + w.cl.c.Central.SBEndpoint, "--bare"}, args...)...))
	}
	ch := sbctl("--columns=chassis", "find", "Port_Binding", "logical_port=cr-vpc1-external")
	if ch == "" {
		return ""
	}
	return sbctl("--columns=name", "list", "Chassis", ch)
}

// bfd is the BFD status of host i's Geneve interfaces.
func (w *underlayWorld) bfd(ctx context.Context, t *testing.T, i int) string {
	t.Helper()
	out, err := w.cl.hosts[i].rig.Run(ctx, "ovs-vsctl", "--db="+w.cl.hosts[i].rig.OVSEndpoint, "--bare", "--columns=name,bfd,bfd_status", "find", "Interface", "type=geneve")
	if err != nil {
		t.Fatalf("ovs-vsctl on %s: %v", w.cl.names[i], err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// kill SIGKILLs host i's daemon called name, by its PID.
func (w *underlayWorld) kill(t *testing.T, i int, name string) {
	t.Helper()
	p, err := w.cl.hosts[i].rig.Daemon(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
}
