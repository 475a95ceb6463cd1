package e2e

import (
	"fmt"
	"testing"
)

// TestAttachmentsMultiHost: pods with two kube-ovn attachments on two hosts reach each other
// over each attachment Subnet (Geneve between the hosts), each attachment port bound on its
// pod's own host.
func TestAttachmentsMultiHost(t *testing.T) {
	cl, ctx := startCluster(t, 2)
	ae1 := startAttachEnv(ctx, t, cl.hosts[0])
	ae2 := &attachEnv{env: cl.hosts[1], dyn: ae1.dyn, nads: nadConfigs(cl.hosts[1])}
	p1 := ae1.runAttached(ctx, t, "mh-1", "a,b")
	p2 := ae2.runAttached(ctx, t, "mh-2", "a,b")
	for _, ifName := range []string{"eth0", "net1", "net2"} {
		retryPing(ctx, t, p1.sb, p2.nets[ifName], fmt.Sprintf("mh-1 (%s) -> mh-2 (%s) %s over %s", cl.names[0], cl.names[1], p2.nets[ifName], ifName))
		retryPing(ctx, t, p2.sb, p1.nets[ifName], fmt.Sprintf("mh-2 (%s) -> mh-1 (%s) %s over %s", cl.names[1], cl.names[0], p1.nets[ifName], ifName))
	}
	for i, p := range []*attachedPod{p1, p2} {
		for _, prov := range []string{"a.default.ovn", "b.default.ovn"} {
			lsp := p.sb.Pod.Name + ".default." + prov
			got := cl.central(ctx, t, "ovn-nbctl", "--db="+cl.c.Central.NBEndpoint, "get", "Logical_Switch_Port", lsp, "options:requested-chassis")
			if want := fmt.Sprintf("%q", cl.names[i]); got != want+"\n" && got != cl.names[i]+"\n" {
				t.Errorf("port %s requested-chassis %q, want %s", lsp, got, cl.names[i])
			}
		}
	}
	t.Logf("mh-1 %v, mh-2 %v", p1.nets, p2.nets)
}
