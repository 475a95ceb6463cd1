package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestUnderlayU2OCustomVpc: u2oInterconnection on an underlay Subnet of a custom Vpc
// (spec.vpc: tenant), as Kube-OVN builds it: the router port is on the Vpc's router
// ("tenant-under", at the u2o address), not on ovn-cluster; the router gets a source route
// per family sending the underlay CIDR to the site's router (Kube-OVN's
// addCustomVPCStaticRouteForSubnet) and no u2o policy; the status names the Vpc. An
// underlay pod's default gateway is the u2o address; it and an overlay pod of the Vpc on the
// other host talk (ping and TCP), it still reaches the site's far network through the site
// router and the site device reaches it. Turned off, the router port, the route and the status
// go and the overlay pod no longer reaches it.
func TestUnderlayU2OCustomVpc(t *testing.T) {
	w, ctx := startUnderlay(t)
	vpcs := w.dyn.Resource(kubeovn.VpcResource)
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v100\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, vpcs, "apiVersion: kubeovn.io/v1\nkind: Vpc\nmetadata:\n  name: tenant\nspec: {}\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: t1\nspec:\n  vpc: tenant\n  cidrBlock: 10.80.0.0/24\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: under\nspec:\n  vpc: tenant\n  cidrBlock: 192.0.2.0/24\n  gateway: 192.0.2.1\n  vlan: v100\n"+
		"  excludeIps: [192.0.2.2..192.0.2.9, 192.0.2.200]\n  u2oInterconnection: true\n")
	for _, name := range []string{"t1", "under"} {
		waitCondition(ctx, t, w.subnets, name, kubeovn.ConditionReady, "True", "")
	}
	st := w.waitU2O(ctx, t, "under", func(st kubeovn.SubnetStatus) bool { return st.U2OInterconnectionIP != "" })
	if st.U2OInterconnectionIP != "192.0.2.10" || st.U2OInterconnectionVPC != "tenant" {
		t.Errorf("u2o status %q on %q: want 192.0.2.10 (the first free) on tenant (the Vpc's router)", st.U2OInterconnectionIP, st.U2OInterconnectionVPC)
	}
	nbctl := func(args ...string) string {
		return w.cl.central(ctx, t, "ovn-nbctl", append([]string{"--db=" + w.cl.c.Central.NBEndpoint}, args...)...)
	}
	ports := nbctl("--columns=name,networks", "list", "Logical_Router_Port")
	if !reMatch(ports, `tenant-under"?\s+networks\s+:\s+\["192.0.2.10/24"\]`) || strings.Contains(ports, "ovn-cluster-under") {
		t.Errorf("router ports: want tenant-under at 192.0.2.10/24 and no ovn-cluster-under:\n%s", ports)
	}
	if routes := nbctl("lr-route-list", "tenant"); !reMatch(routes, `192.0.2.0/24\s+192.0.2.1\s+src-ip`) {
		t.Errorf("tenant's routes lack the u2o source route 192.0.2.0/24 via 192.0.2.1:\n%s", routes)
	}
	if p := nbctl("lr-policy-list", "ovn-cluster"); strings.Contains(p, "192.0.2.0/24") {
		t.Errorf("ovn-cluster has u2o policies of a custom VPC's subnet:\n%s", p)
	}

	u := w.underlayPod(ctx, t, 0, "u", "under")
	o := w.underlayPod(ctx, t, 1, "o", "t1") // an overlay pod of tenant
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", u.NetnsName(), "ip", "route", "show", "default").CombinedOutput(); err != nil || !strings.Contains(string(out), "via 192.0.2.10") {
		t.Errorf("underlay pod's default route: %q %v, want via the u2o address 192.0.2.10", out, err)
	}
	retryPing(ctx, t, u, o.IP(), "underlay pod -> tenant's overlay pod on the other host (u2o)")
	retryPing(ctx, t, o, u.IP(), "tenant's overlay pod -> underlay pod (u2o)")
	if err := podsim.TCP(ctx, o, u); err != nil {
		t.Errorf("tcp overlay pod -> underlay pod: %v", err)
	}
	if err := podsim.TCP(ctx, u, o); err != nil {
		t.Errorf("tcp underlay pod -> overlay pod: %v", err)
	}
	retryPing(ctx, t, u, siteFar, "underlay pod -> the site's far network, through the site router (the u2o source route)")
	if out, err := w.site.InDevice(ctx, "ping", "-c3", "-i0.2", "-W1", u.IP().String()); err != nil {
		t.Errorf("site device -> underlay pod: %v\n%s", err, out)
	}

	w.patchSubnet(ctx, t, "under", `{"spec":{"u2oInterconnection":false}}`)
	w.waitU2O(ctx, t, "under", func(st kubeovn.SubnetStatus) bool {
		return st.U2OInterconnectionIP == "" && st.U2OInterconnectionVPC == ""
	})
	eventually(ctx, t, "tenant-under and the u2o route gone", func() bool {
		return !strings.Contains(nbctl("--columns=name", "list", "Logical_Router_Port"), "tenant-under") &&
			!strings.Contains(nbctl("lr-route-list", "tenant"), "192.0.2.0/24")
	})
	noPing(ctx, t, o, u.IP(), "overlay pod -> underlay pod after u2oInterconnection was turned off")
}
