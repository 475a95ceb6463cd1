package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// TestHostNetworksFollowAddresses: a network the host joins after edgeovn started (an address
// added to one of its interfaces) is published on its Node at once, not at the Node's next
// change, so a Subnet on it is refused; when the address goes, the network leaves the Node.
func TestHostNetworksFollowAddresses(t *testing.T) {
	env, ctx := startNode(t)
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionReady, "True", "")
	networks := func() string { return nodeAnnotation(ctx, t, env, annotation.HostNetworksKey) }
	eventually(ctx, t, "the node's networks on its Node", func() bool { return strings.Contains(networks(), `"192.0.2.0/24"`) })
	for _, step := range [][]string{{"link", "add", "lan2", "type", "veth", "peer", "name", "lan2p"}, {"link", "set", "lan2", "up"},
		{"addr", "add", "198.18.7.10/24", "dev", "lan2"}} {
		if out, err := env.rig.Run(ctx, "ip", step...); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second) // the Node itself does not change
	defer cancel()
	eventually(wait, t, "the new network 198.18.7.0/24 on the Node", func() bool { return strings.Contains(networks(), `"198.18.7.0/24"`) })
	applyYAML(ctx, t, subnets, subnetYAML("lan2", "198.18.7.0/24"))
	waitCondition(ctx, t, subnets, "lan2", kubeovn.ConditionValidated, "False",
		"cidr 198.18.7.0/24 overlaps host network of node "+node+" 198.18.7.0/24")
	deleteSubnet(ctx, t, subnets, "lan2")
	if out, err := env.rig.Run(ctx, "ip", "link", "del", "lan2"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	eventually(wait, t, "198.18.7.0/24 gone from the Node", func() bool { return !strings.Contains(networks(), `"198.18.7.0/24"`) })
}
