package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// TestSubnetLeavesHostAlone: the host (eth0 192.0.2.10/24, its LAN peers 192.0.2.1 and .20 in another
// namespace, and a site route 198.51.100.0/24 via that peer) keeps its whole route table
// (IPv4 and IPv6, every table) and its LAN peer through bad Subnets and their deletion. A
// Subnet on the host's LAN, inside the Service CIDR, or in a special range is refused by the
// controller with a condition and an Event naming both sides; a Subnet the controller cannot
// know is in the way (the site route's prefix) is accepted, but the node role installs
// nothing for it and says so on its Node; a good Subnet still gets its route, marked as
// edgeovn's (proto 211), and loses it on deletion.
func TestSubnetLeavesHostAlone(t *testing.T) {
	env := startEnvOpts(t, false, harness.Options{LANPeer: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if err := env.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionReady, "True", "")
	eventually(ctx, t, "host wired (route to the cluster CIDR)", func() bool {
		return strings.Contains(hostRoutes(ctx, t, env), "10.42.0.0/16 via 100.64.0.1 dev ovn0")
	})
	eventually(ctx, t, "the node's networks on its Node", func() bool {
		return strings.Contains(nodeAnnotation(ctx, t, env, annotation.HostNetworksKey), `"192.0.2.0/24"`)
	})
	lanPeer := func(when string) {
		t.Helper()
		if out, err := env.rig.Run(ctx, "ping", "-c1", "-W2", harness.LANPeerIP.String()); err != nil {
			t.Fatalf("LAN peer %s unreachable %s: %v\n%s\n%s", harness.LANPeerIP, when, err, out, hostRoutes(ctx, t, env))
		}
	}
	lanPeer("at the start")
	if out, err := env.rig.Run(ctx, "ip", "route", "add", "198.51.100.0/24", "via", "192.0.2.1", "dev", "eth0"); err != nil {
		t.Fatalf("site route: %v\n%s", err, out)
	}

	// A good Subnet is routed, as edgeovn's, and unrouted on deletion.
	applyYAML(ctx, t, subnets, subnetYAML("good", "10.77.0.0/16"))
	eventually(ctx, t, "good's route, proto 211", func() bool {
		return strings.Contains(hostRoutes(ctx, t, env), "10.77.0.0/16 via 100.64.0.1 dev ovn0 proto 211")
	})
	deleteSubnet(ctx, t, subnets, "good")
	eventually(ctx, t, "good's route removed", func() bool { return !strings.Contains(hostRoutes(ctx, t, env), "10.77.0.0/16") })

	// The kernel gives ovn0 its IPv6 link-local address after DAD, in its own time.
	eventually(ctx, t, "ovn0's IPv6 link-local address", func() bool {
		for _, l := range strings.Split(hostRoutes(ctx, t, env), "\n") {
			if strings.HasPrefix(l, "local fe80:") && strings.Contains(l, "dev ovn0") {
				return true
			}
		}
		return false
	})
	before := hostRoutes(ctx, t, env)
	refused := []struct{ name, cidr, says string }{
		{"lan", "192.0.2.0/24", "cidr 192.0.2.0/24 overlaps address of node " + node + " 192.0.2.10/32"},
		{"lanhalf", "192.0.2.128/25", "cidr 192.0.2.128/25 overlaps host network of node " + node + " 192.0.2.0/24"},
		{"svc", "10.43.0.0/24", "cidr 10.43.0.0/24 overlaps Service CIDR 10.43.0.0/16"},
		{"zero", "0.0.0.0/1", "cidr 0.0.0.0/1 overlaps the unspecified"},
		{"loop", "127.1.0.0/16", "overlaps the loopback range 127.0.0.0/8"},
		{"linklocal", "169.254.10.0/24", "overlaps the link-local range 169.254.0.0/16"},
		{"mcast", "224.10.0.0/16", "overlaps the multicast range 224.0.0.0/4"},
	}
	for _, r := range refused {
		applyYAML(ctx, t, subnets, subnetYAML(r.name, r.cidr))
		waitCondition(ctx, t, subnets, r.name, kubeovn.ConditionValidated, "False", r.says)
		ev := waitSubnetEvent(ctx, t, env, r.name, "CIDRReserved")
		t.Logf("subnet %s (%s) refused, Event: %s", r.name, r.cidr, ev)
		lanPeer("after subnet " + r.name)
	}
	// Accepted by the controller (no host's interface is on it), left out by the node.
	applyYAML(ctx, t, subnets, subnetYAML("site", "198.51.100.0/24"))
	waitCondition(ctx, t, subnets, "site", kubeovn.ConditionValidated, "True", "")
	eventually(ctx, t, "the node reports the site route in the way", func() bool {
		c := nodeAnnotation(ctx, t, env, annotation.RouteConflictsKey)
		return strings.Contains(c, "198.51.100.0/24 (overlaps 198.51.100.0/24 via 192.0.2.1 dev eth0")
	})
	t.Logf("node %s %s: %s", node, annotation.RouteConflictsKey, nodeAnnotation(ctx, t, env, annotation.RouteConflictsKey))
	t.Logf("node %s Event: %s", node, waitSubnetEvent(ctx, t, env, node, "RouteConflict"))
	if after := hostRoutes(ctx, t, env); after != before {
		t.Fatalf("host routes changed with the bad Subnets:\n%s\nwere\n%s", after, before)
	}
	lanPeer("with the bad Subnets")
	if m := httpGet(ctx, t, env, "/metrics"); !strings.Contains(m, "edgeovn_host_route_conflicts 1") {
		t.Errorf("/metrics does not count the prefix left out")
	}
	status, err := env.command(ctx, "status")
	if err != nil || !strings.Contains(status, "LEFT OUT, in the way: 198.51.100.0/24") {
		t.Errorf("edgeovn status does not say what was left out: %v\n%s", err, status)
	}
	t.Logf("edgeovn status:\n%s", status)
	env.doctorFails(ctx, t, "host routes", "fix: the Subnet overlaps a network of this host")

	for _, r := range append(refused, struct{ name, cidr, says string }{"site", "", ""}) {
		deleteSubnet(ctx, t, subnets, r.name)
	}
	eventually(ctx, t, "the node's conflicts cleared", func() bool {
		return nodeAnnotation(ctx, t, env, annotation.RouteConflictsKey) == ""
	})
	if after := hostRoutes(ctx, t, env); after != before {
		t.Fatalf("host routes changed after the bad Subnets were deleted:\n%s\nwere\n%s", after, before)
	}
	lanPeer("after the bad Subnets were deleted")
	env.doctorPasses(ctx, t)

	// A configuration on the host's LAN stops the start, naming it, the host untouched.
	for flag, says := range map[string]string{
		"--cluster-cidr=192.0.2.0/24": "cluster-cidr: cidr 192.0.2.0/24 overlaps a network of this host's interfaces 192.0.2.0/24",
		"--join-cidr=192.0.0.0/16":    "join-cidr: cidr 192.0.0.0/16 overlaps a network of this host's interfaces 192.0.2.0/24",
	} {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := env.rig.Run(rctx, env.bin, "run", "--config=/dev/null", "--node-name="+node, "--kubeconfig="+env.rig.Kubeconfig,
			"--ovn-nb="+env.rig.NBEndpoint, "--ovn-sb="+env.rig.SBEndpoint, "--ovs-db="+env.rig.OVSEndpoint,
			"--ipam-db="+t.TempDir()+"/ipam.db", "--cni-socket="+t.TempDir()+"/cni.sock", "--metrics-address=", flag)
		timedOut := rctx.Err() != nil
		cancel()
		if err == nil || timedOut || !strings.Contains(string(out), says) {
			t.Errorf("edgeovn run %s: %v, want it to stop at once saying %q:\n%s", flag, err, says, out)
		}
		t.Logf("edgeovn run %s: %s", flag, lastLine(string(out)))
	}
	if after := hostRoutes(ctx, t, env); after != before {
		t.Fatalf("host routes changed by the refused starts:\n%s\nwere\n%s", after, before)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func subnetYAML(name, cidr string) string {
	return fmt.Sprintf("apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: %s\nspec:\n  cidrBlock: %s\n", name, cidr)
}

func deleteSubnet(ctx context.Context, t *testing.T, res dynamic.NamespaceableResourceInterface, name string) {
	t.Helper()
	if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete subnet %s: %v", name, err)
	}
	eventually(ctx, t, "subnet "+name+" deleted", func() bool {
		_, err := res.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// hostRoutes is the host's whole route table: `ip route show table all`, IPv4 and IPv6.
func hostRoutes(ctx context.Context, t *testing.T, env *env) string {
	t.Helper()
	var b strings.Builder
	for _, fam := range []string{"-4", "-6"} {
		out, err := env.rig.Run(ctx, "ip", fam, "route", "show", "table", "all")
		if err != nil {
			t.Fatalf("ip %s route: %v", fam, err)
		}
		b.Write(out)
	}
	return b.String()
}

func nodeAnnotation(ctx context.Context, t *testing.T, env *env, key string) string {
	t.Helper()
	n, err := env.rig.Kube().CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node %s: %v", node, err)
	}
	return n.Annotations[key]
}

// waitSubnetEvent waits for a Warning Event with reason on the object name (a Subnet, a Node)
// and returns its message.
func waitSubnetEvent(ctx context.Context, t *testing.T, env *env, name, reason string) string {
	t.Helper()
	var msg string
	eventually(ctx, t, "event "+reason+" on subnet "+name, func() bool {
		evs, err := env.rig.Kube().CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil || len(evs.Items) == 0 {
			return false
		}
		msg = evs.Items[0].Message
		return true
	})
	return msg
}
