package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Kube-OVN's private Subnet example, from its documentation (guide/subnet, "Subnet
// Isolation"), unchanged; and a Subnet on one of the CIDRs it allows.
const (
	kubeOVNPrivate = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: private
spec:
  protocol: IPv4
  default: false
  namespaces:
  - ns1
  - ns2
  cidrBlock: 10.69.0.0/16
  private: true
  allowSubnets:
  - 10.16.0.0/16
  - 10.18.0.0/16
`
	allowedSubnet = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: allowed
spec:
  cidrBlock: 10.16.0.0/16
  namespaces:
  - ns3
`
)

// TestPrivateSubnet applies Kube-OVN's private Subnet example: its pods reach each other, pods
// of an allowed subnet reach them and are reached (ping and TCP), and the host reaches them
// (kubelet's probes); a pod of the default subnet neither reaches them nor is reached. Turning
// private off opens the subnet, on closes it again. A NetworkPolicy that allows everything in
// does not open it, and one that denies everything in still holds inside it (the host stays
// allowed). A bad allowSubnets entry is refused by name and the isolation in force stays (the
// Subnet stays Ready, its host route with it). A
// restart writes no ACL. Deleting the Subnet leaves no ACL of it.
func TestPrivateSubnet(t *testing.T) {
	env, _ := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "")
	for _, ns := range []string{"ns1", "ns3"} {
		if _, err := env.rig.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	applyYAML(ctx, t, subnets, allowedSubnet)
	applyYAML(ctx, t, subnets, kubeOVNPrivate)
	for _, name := range []string{"allowed", "private"} {
		waitCondition(ctx, t, subnets, name, kubeovn.ConditionReady, "True", "")
	}
	waitCondition(ctx, t, subnets, "private", kubeovn.ConditionUnsupported, "False", "")

	p1, p2 := runPodIn(ctx, t, env, "ns1", "p1"), runPodIn(ctx, t, env, "ns1", "p2")
	a, d := runPodIn(ctx, t, env, "ns3", "a"), runPod(ctx, t, env, "d")
	t.Logf("private %s %s, allowed %s, default %s", p1.IP(), p2.IP(), a.IP(), d.IP())
	nodeJoin(ctx, t, env)
	isolated := func(when string) {
		t.Helper()
		mustReach(ctx, t, p1, p2, when)
		mustReach(ctx, t, a, p1, when)
		mustReach(ctx, t, p1, a, when)
		mustBeBlocked(ctx, t, d, p1, when)
		mustBeBlocked(ctx, t, p1, d, when)
		hostReaches(ctx, t, env, p1, when)
	}
	isolated("private")

	// A bad entry: refused by name, the isolation in force stays.
	before := subnetACLVersions(ctx, t, env, "private")
	patchSubnet(ctx, t, subnets, "private", map[string]any{"allowSubnets": []string{"10.16.0.0/16", "10.18.0/16"}})
	waitCondition(ctx, t, subnets, "private", kubeovn.ConditionValidated, "False", `allowSubnets entry "10.18.0/16" is not a CIDR`)
	waitCondition(ctx, t, subnets, "private", kubeovn.ConditionReady, "True", "change refused, the spec applied before stays in force")
	isolated("after a bad allowSubnets entry")
	if after := subnetACLVersions(ctx, t, env, "private"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the refused spec changed the ACLs: %v -> %v", before, after)
	}
	patchSubnet(ctx, t, subnets, "private", map[string]any{"allowSubnets": []string{"10.16.0.0/16", "10.18.0.0/16"}})
	waitCondition(ctx, t, subnets, "private", kubeovn.ConditionValidated, "True", "")

	patchSubnet(ctx, t, subnets, "private", map[string]any{"private": false})
	eventually(ctx, t, "no ACL left on the switch with private off", func() bool { return len(subnetACLVersions(ctx, t, env, "private")) == 0 })
	mustReach(ctx, t, d, p1, "private off")
	mustReach(ctx, t, p1, d, "private off")
	patchSubnet(ctx, t, subnets, "private", map[string]any{"private": true})
	isolated("private on again")

	// NetworkPolicies compose with the isolation: neither undoes the other.
	np := env.kubelet.Kube.NetworkingV1().NetworkPolicies("ns1")
	allowAll := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "allow-all"},
		Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{}}}}
	base := len(env.policyRowVersions(ctx, t))
	if _, err := np.Create(ctx, allowAll, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the allow-all policy's rows", func() bool { return len(env.policyRowVersions(ctx, t)) > base })
	isolated("with a policy allowing everything in")
	if err := np.Delete(ctx, "allow-all", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	denyAll := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny-all"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	if _, err := np.Create(ctx, denyAll, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustBeBlocked(ctx, t, p2, p1, "same subnet, a policy denying everything in")
	mustBeBlocked(ctx, t, a, p1, "allowed subnet, a policy denying everything in")
	hostReaches(ctx, t, env, p1, "a policy denying everything in")
	if err := np.Delete(ctx, "deny-all", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the policies' rows gone", func() bool { return len(env.policyRowVersions(ctx, t)) == base })
	isolated("policies deleted")

	restartWritesNoACL(ctx, t, env)
	isolated("after a restart")

	// Deleting the Subnet (after its pods) leaves none of its ACLs.
	for _, sb := range []*podsim.Sandbox{p1, p2} {
		if err := env.kubelet.StopSandbox(ctx, sb, true); err != nil {
			t.Fatal(err)
		}
		if err := env.kubelet.DeletePod(ctx, sb.Pod); err != nil {
			t.Fatal(err)
		}
	}
	if err := subnets.Delete(ctx, "private", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "private's switch removed", func() bool { return !env.lspExists(ctx, t, "private-ovn-cluster") })
	if v := subnetACLVersions(ctx, t, env, "private"); len(v) != 0 {
		t.Fatalf("ACLs of the deleted subnet left: %v", v)
	}
	mustReach(ctx, t, a, d, "after the private subnet went")
}

// mustReach waits until from pings to's address, then checks a TCP echo.
func mustReach(ctx context.Context, t *testing.T, from, to *podsim.Sandbox, when string) {
	t.Helper()
	var out string
	var err error
	for i := 0; i < 20; i++ {
		if out, err = podsim.Ping(ctx, from, to.IP()); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: %s (%s) cannot reach %s (%s): %v\n%s", when, from.Pod.Name, from.IP(), to.Pod.Name, to.IP(), err, out)
	}
	if err := podsim.TCP(ctx, from, to); err != nil {
		t.Fatalf("%s: tcp %s -> %s: %v", when, from.Pod.Name, to.Pod.Name, err)
	}
}

// mustBeBlocked waits until from's pings to to's address fail, then checks TCP fails too.
func mustBeBlocked(ctx context.Context, t *testing.T, from, to *podsim.Sandbox, when string) {
	t.Helper()
	var err error
	for i := 0; i < 20; i++ {
		if _, err = podsim.Ping(ctx, from, to.IP()); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatalf("%s: %s (%s) still reaches %s (%s)", when, from.Pod.Name, from.IP(), to.Pod.Name, to.IP())
	}
	if err := podsim.TCP(ctx, from, to); err == nil {
		t.Fatalf("%s: tcp %s -> %s connected, want blocked", when, from.Pod.Name, to.Pod.Name)
	}
}

// hostReaches: the host pings the pod and opens a TCP connection to it, as kubelet's probes do.
func hostReaches(ctx context.Context, t *testing.T, env *env, to *podsim.Sandbox, when string) {
	t.Helper()
	eventually(ctx, t, when+": the host reaches "+to.Pod.Name, func() bool {
		_, err := env.rig.Run(ctx, "ping", "-c", "1", "-W", "1", to.IP().String())
		return err == nil
	})
	if err := podsim.TCPBetween(ctx, env.rig.NetnsPath, to.Netns, to.IP()); err != nil {
		t.Fatalf("%s: tcp host -> %s: %v", when, to.Pod.Name, err)
	}
}

func patchSubnet(ctx context.Context, t *testing.T, res dynamic.NamespaceableResourceInterface, name string, spec map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch subnet %s with %s: %v", name, b, err)
	}
}

// subnetACLVersions maps each ACL the Subnet owns (external_ids owner-kind=Subnet) to its
// _version, which changes on every write of the row.
func subnetACLVersions(ctx context.Context, t *testing.T, env *env, subnet string) map[string]string {
	t.Helper()
	q := `["OVN_Northbound",{"op":"select","table":"ACL","where":[],"columns":["_uuid","_version","external_ids"]}]`
	b, err := env.rig.Run(ctx, "ovsdb-client", "transact", env.rig.NBEndpoint, q)
	if err != nil {
		t.Fatalf("select ACL: %v\n%s", err, b)
	}
	var res []struct {
		Rows []struct {
			UUID        []string `json:"_uuid"`
			Version     []string `json:"_version"`
			ExternalIDs []any    `json:"external_ids"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res) != 1 {
		t.Fatalf("select ACL: %v\n%s", err, b)
	}
	out := map[string]string{}
	for _, r := range res[0].Rows {
		ids, _ := json.Marshal(r.ExternalIDs)
		if strings.Contains(string(ids), `["owner-kind","Subnet"]`) && strings.Contains(string(ids), fmt.Sprintf(`["owner",%q]`, subnet)) {
			out[r.UUID[1]] = r.Version[1]
		}
	}
	return out
}

// restartWritesNoACL restarts edgeovn and checks that the new controller's reconcile wrote no
// ACL: the northbound database's log holds no transaction on the ACL table from the restart
// until the database has been quiet for two seconds.
func restartWritesNoACL(ctx context.Context, t *testing.T, env *env) {
	t.Helper()
	versions := subnetACLVersions(ctx, t, env, "private")
	before, err := env.rig.Transactions(harness.NBDatabase)
	if err != nil {
		t.Fatal(err)
	}
	env.stopDaemon(t)
	env.startDaemon(ctx, t, "edgeovn-restarted")
	eventually(ctx, t, "restarted controller running", func() bool {
		return strings.Contains(env.daemonLog(), "controller role running")
	})
	var after []harness.Transaction
	last, since := -1, time.Now()
	eventually(ctx, t, "northbound quiet for 2 s", func() bool {
		if after, err = env.rig.Transactions(harness.NBDatabase); err != nil {
			t.Fatal(err)
		}
		if len(after) != last {
			last, since = len(after), time.Now()
		}
		return time.Since(since) >= 2*time.Second
	})
	if len(after) < len(before) {
		t.Fatalf("northbound compacted during the restart (%d -> %d records): cannot count", len(before), len(after))
	}
	for _, tx := range after[len(before):] {
		t.Logf("restart wrote northbound tables %v", tx.Tables)
		for _, table := range tx.Tables {
			if table == "ACL" {
				t.Errorf("the restart wrote ACLs: %s", tx.Raw)
			}
		}
	}
	if now := subnetACLVersions(ctx, t, env, "private"); len(now) == 0 || fmt.Sprint(now) != fmt.Sprint(versions) {
		t.Errorf("the subnet's ACLs after the restart %v, before %v", now, versions)
	}
}
