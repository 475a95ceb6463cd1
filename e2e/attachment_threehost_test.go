package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// attachCluster is a multi-host rig with the attachment networks a and b (startAttachEnv)
// and, on each host, a pod selecting both.
type attachCluster struct {
	cl   *cluster
	aes  []*attachEnv   // aes[i] serves host i
	pods []*attachedPod // pods[i] runs on host i
	on   map[string]int // pod name -> host index
}

// startAttachCluster starts hosts hosts and runs the pod <prefix>-<n> with attachments a and
// b on host n (from 1), the last host's first: the addresses are handed out in another order
// than the pods' names sort in (the order a new leader lists them), so a leader that
// allocated them again instead of adopting them would not hand out the same ones.
func startAttachCluster(t *testing.T, hosts int, prefix string) (*attachCluster, context.Context) {
	t.Helper()
	cl, ctx := startCluster(t, hosts)
	first := startAttachEnv(ctx, t, cl.hosts[0])
	ac := &attachCluster{cl: cl, on: map[string]int{}}
	for i, h := range cl.hosts {
		ae := first
		if i > 0 {
			ae = &attachEnv{env: h, dyn: first.dyn, nads: nadConfigs(h)}
		}
		ac.aes = append(ac.aes, ae)
	}
	for i := len(cl.hosts) - 1; i >= 0; i-- {
		ac.run(ctx, t, i, fmt.Sprintf("%s-%d", prefix, i+1))
	}
	return ac, ctx
}

// run starts the pod name with attachments a and b on host i.
func (ac *attachCluster) run(ctx context.Context, t *testing.T, i int, name string) *attachedPod {
	t.Helper()
	p := ac.aes[i].runAttached(ctx, t, name, "a,b")
	ac.pods = append(ac.pods, p)
	ac.on[name] = i
	return p
}

// where names a pod and its host for messages.
func (ac *attachCluster) where(p *attachedPod) string {
	return fmt.Sprintf("%s (%s)", p.sb.Pod.Name, ac.cl.names[ac.on[p.sb.Pod.Name]])
}

// pingMatrix: every pod reaches every other pod over each of ifNames (the peer's address on
// that interface, so over that interface's Subnet).
func (ac *attachCluster) pingMatrix(ctx context.Context, t *testing.T, ifNames ...string) {
	t.Helper()
	for _, from := range ac.pods {
		for _, to := range ac.pods {
			if from == to {
				continue
			}
			for _, ifName := range ifNames {
				retryPing(ctx, t, from.sb, to.nets[ifName], fmt.Sprintf("%s -> %s %s over %s", ac.where(from), ac.where(to), to.nets[ifName], ifName))
			}
		}
	}
}

// TestAttachmentsThreeHosts: a pod with two kube-ovn attachments on each of three hosts;
// every pod reaches every other over eth0 and over each attachment Subnet (Geneve between
// every pair of hosts). A NetworkPolicy denying all ingress in the namespace then cuts eth0
// between every pair and leaves net1 and net2 open (policy applies to the primary network
// only, as in Kube-OVN): no attachment port is in a port group, every primary port is.
// Deleting the policy opens eth0 again.
func TestAttachmentsThreeHosts(t *testing.T) {
	ac, ctx := startAttachCluster(t, 3, "th")
	ac.pingMatrix(ctx, t, "eth0", "net1", "net2")
	for _, p := range ac.pods {
		t.Logf("%s: %v", ac.where(p), p.nets)
	}

	pols := ac.cl.hosts[0].kubelet.Kube.NetworkingV1().NetworkPolicies("default")
	np := ingress(pol("default"))
	np.Name = "deny-ingress"
	if _, err := pols.Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b := ac.pods[0], ac.pods[1]
	eventually(ctx, t, "the deny-all policy cutting eth0 "+ac.where(a)+" -> "+ac.where(b), func() bool {
		_, err := podsim.Ping(ctx, a.sb, b.nets["eth0"])
		return err != nil
	})
	for _, from := range ac.pods {
		for _, to := range ac.pods {
			if from == to {
				continue
			}
			if out, err := podsim.Ping(ctx, from.sb, to.nets["eth0"]); err == nil {
				t.Errorf("deny-all ingress: %s -> %s %s over eth0 still answered:\n%s", ac.where(from), ac.where(to), to.nets["eth0"], out)
			}
		}
	}
	ac.pingMatrix(ctx, t, "net1", "net2")
	ac.checkPortGroups(ctx, t)
	t.Logf("deny-all ingress: eth0 cut between every pair of pods, net1 and net2 open")

	if err := pols.Delete(ctx, np.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ac.pingMatrix(ctx, t, "eth0")
	t.Logf("policy deleted: eth0 open again")
}

// checkPortGroups: every pod's primary port is in a policy port group (so the policy is
// applied through them), none of its attachment ports is.
func (ac *attachCluster) checkPortGroups(ctx context.Context, t *testing.T) {
	t.Helper()
	nb := "--db=" + ac.cl.c.Central.NBEndpoint
	grouped := ac.cl.central(ctx, t, "ovn-nbctl", nb, "--bare", "--columns=ports", "list", "Port_Group")
	for _, p := range ac.pods {
		for _, suffix := range []string{"", ".a.default.ovn", ".b.default.ovn"} {
			lsp := p.sb.Pod.Name + ".default" + suffix
			uuid := strings.TrimSpace(ac.cl.central(ctx, t, "ovn-nbctl", nb, "--bare", "--columns=_uuid", "find", "Logical_Switch_Port", "name="+lsp))
			if uuid == "" {
				t.Fatalf("no port %s", lsp)
			}
			in := strings.Contains(grouped, uuid)
			if suffix == "" && !in {
				t.Errorf("primary port %s is in no port group under a policy selecting its pod", lsp)
			}
			if suffix != "" && in {
				t.Errorf("attachment port %s is in a policy port group: policy applies to the primary network only", lsp)
			}
		}
	}
}
