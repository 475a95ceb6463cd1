package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestUnderlayGuards: bad input changes nothing on the hosts and says what was wrong. A
// ProviderNetwork naming an interface the nodes lack leaves every node not ready with that
// reason (their addresses and routes untouched, no bridge); a second ProviderNetwork on a NIC
// another one holds is refused on each node naming the holder, and the first keeps its bridge;
// a Vlan id out of range is refused by the API server naming spec.id; a Subnet naming a missing
// Vlan is refused naming spec.vlan, with no switch in northbound. Then edgeovn is SIGKILLed
// and restarted under a host ping through the moved route (none lost, the bridge kept as it
// was), and `edgeovn cleanup --ovs` gives eth1 its address and route back.
func TestUnderlayGuards(t *testing.T) {
	w, ctx := startUnderlay(t)
	h1 := w.cl.hosts[0]
	before := []string{hostView(ctx, t, w.cl.hosts[0]), hostView(ctx, t, w.cl.hosts[1])}

	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: ghost\nspec:\n  defaultInterface: eth9\n")
	w.pnNotReady(ctx, t, "ghost", "interface eth9 not found on node edge-1", "interface eth9 not found on node edge-2")
	for i, e := range w.cl.hosts {
		if got := hostView(ctx, t, e); got != before[i] {
			t.Errorf("%s changed by a ProviderNetwork on a missing interface:\n%s\nwas:\n%s", w.cl.names[i], got, before[i])
		}
		if got := e.vsctl(ctx, t, "list-br"); strings.Contains(got, "br-ghost") {
			t.Errorf("%s: br-ghost made: %s", w.cl.names[i], got)
		}
	}

	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	wired := hostView(ctx, t, h1)
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: dup\nspec:\n  defaultInterface: eth1\n")
	w.pnNotReady(ctx, t, "dup", "interface eth1 on node edge-1 is already the uplink of provider network site")
	if got := hostView(ctx, t, h1); got != wired {
		t.Errorf("a second ProviderNetwork on eth1 changed the host:\n%s\nwas:\n%s", got, wired)
	}
	if got := h1.vsctl(ctx, t, "list-br"); strings.Contains(got, "br-dup") {
		t.Errorf("br-dup made: %s", got)
	}

	if err := createYAML(ctx, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: big\nspec:\n  id: 5000\n  provider: site\n"); err == nil ||
		!strings.Contains(err.Error(), "spec.id") {
		t.Errorf("vlan id 5000: %v, want a refusal naming spec.id", err)
	} else {
		t.Logf("vlan id 5000 refused: %v", err)
	}
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: novlan\nspec:\n  cidrBlock: 192.0.2.0/24\n  gateway: 192.0.2.1\n  vlan: missing\n")
	waitCondition(ctx, t, w.subnets, "novlan", kubeovn.ConditionValidated, "False", "spec.vlan: vlan missing not found")
	if got := w.cl.central(ctx, t, "ovn-nbctl", "--db="+w.cl.c.Central.NBEndpoint, "ls-list"); strings.Contains(got, "novlan") {
		t.Errorf("switch of a Subnet naming a missing Vlan: %s", got)
	}

	// SIGKILL and restart under a ping from the host through the moved route.
	ping := startPinger(t, h1.rig.Netns, siteFar)
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(h1.daemon.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = h1.daemon.Wait()
	var err error
	h1.daemon, err = daemon.Start(ctx, h1.rig, daemon.Spec{Name: "edgeovn-restarted", Node: w.cl.names[0], BinDir: w.cl.bins, Extra: daemonFlags})
	if err != nil {
		t.Fatal(err)
	}
	if err := h1.kubelet.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the restarted node role lists the ProviderNetworks and syncs
	sent, lost := ping.stop(t)
	t.Logf("edgeovn SIGKILLed and restarted: host pings through br-site %d sent, %d lost", sent, lost)
	if lost > 0 {
		t.Errorf("the host lost %d of %d pings across edgeovn's SIGKILL and restart", lost, sent)
	}
	if got := hostView(ctx, t, h1); got != wired {
		t.Errorf("restart changed the host:\n%s\nwas:\n%s", got, wired)
	}

	// cleanup gives eth1 back.
	if err := h1.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	out, err := h1.rig.Run(ctx, h1.bin, "cleanup", "--ovs", "--ovs-db="+h1.rig.OVSEndpoint, "--cni-socket="+filepath.Join(h1.rig.Dir, "cni.sock"))
	t.Logf("edgeovn cleanup --ovs:\n%s", out)
	if err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	v := hostView(ctx, t, h1)
	if strings.Contains(v, "br-site") || !strings.Contains(v, "198.18.0.0/15 via 198.51.100.1 dev eth1") || !reMatch(v, `eth1@\S+\s+\S+\s+198.51.100.11/24`) {
		t.Errorf("after cleanup, want eth1 with its address and route, no br-site:\n%s", v)
	}
	if out, err := h1.rig.Run(ctx, "ping", "-c3", "-i0.2", "-W1", siteFar.String()); err != nil {
		t.Errorf("host -> %s after cleanup: %v\n%s", siteFar, err, out)
	}
}
