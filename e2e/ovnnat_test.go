package e2e

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Kube-OVN's OVN EIP/FIP/SNAT setup (its docs, "OVN EIP FIP SNAT"): the external network is
// an underlay Subnet "external" (here VLAN 100 of TestUnderlay's site, 192.0.2.0/24, the
// site router .1, the site device .200), the gateway node is named in the ConfigMap, and a
// custom Vpc asks for the link with enableExternal.
const natExternal = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: external
spec:
  protocol: IPv4
  cidrBlock: 192.0.2.0/24
  gateway: 192.0.2.1
  vlan: v100
  excludeIps: [192.0.2.1..192.0.2.9, 192.0.2.200]
`

const natVpc = `kind: Vpc
apiVersion: kubeovn.io/v1
metadata:
  name: vpc1
spec:
  enableExternal: true
---
kind: Subnet
apiVersion: kubeovn.io/v1
metadata:
  name: net1
spec:
  vpc: vpc1
  cidrBlock: 10.0.1.0/24
  protocol: IPv4
`

// TestOvnNat: on one host of TestUnderlay's site, a custom Vpc with enableExternal gets its
// router port on the external underlay Subnet (its EIP "vpc1-external" from the IPAM, the
// gateway chassis the ConfigMap's node, the default route to the site router). The site
// device does not reach a pod's EIP until an OvnFip maps it; then it does (tcpdump in the
// pod sees the device's address). Another pod of the VPC does not reach the site until an
// OvnSnatRule for its Subnet exists; then the device sees the SNAT EIP as the source. A FIP
// naming a missing EIP, a second FIP on a used EIP, a FIP whose pod is in another VPC than
// spec.vpc, an EIP outside the external Subnet and one on a used address are refused naming
// the field, and the working FIP is untouched. An OvnDnatRule forwards one TCP port of its
// EIP to a pod's port (another port of the EIP is not forwarded; a second rule on the same
// port is refused, and takes the port over when the first is deleted); deleting it removes its
// load balancer. A restart of edgeovn writes none of
// the family's rows and keeps every EIP's address. Deleting the FIP removes exactly its row.
func TestOvnNat(t *testing.T) {
	w, ctx := startUnderlayHosts(t, 1)
	dyn := w.dyn
	vpcs, eips := dyn.Resource(kubeovn.VpcResource), dyn.Resource(kubeovn.OvnEipResource)
	fips, snats := dyn.Resource(kubeovn.OvnFipResource), dyn.Resource(kubeovn.OvnSnatRuleResource)
	w.natExternalNetwork(ctx, t, w.cl.names[0])
	// Pay only for what is used: with no NAT object, edgeovn watches none of the NAT kinds;
	// the first one, created now (after the controller started), is found and served.
	kube := w.cl.c.Central.Kube()
	if n := apiWatches(ctx, t, kube, "ovn-eips"); n != 0 {
		t.Errorf("%v watches of ovn-eips with no NAT object, want none", n)
	}
	applyYAML(ctx, t, eips, "kind: OvnEip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: eip-snat\nspec:\n  externalSubnet: external\n  v4Ip: 192.0.2.50\n")
	if st := waitNatReady(ctx, t, eips, "eip-snat"); st["v4Ip"] != "192.0.2.50" || st["macAddress"] == "" {
		t.Errorf("eip-snat status %v: want 192.0.2.50 and a MAC", st)
	}
	eventually(ctx, t, "edgeovn watches ovn-eips once one exists", func() bool { return apiWatches(ctx, t, kube, "ovn-eips") > 0 })
	w.natLinkedVpc(ctx, t, vpcs)
	lrpEip := natStatus(ctx, t, eips, "vpc1-external")
	if lrpEip["v4Ip"] != "192.0.2.10" || lrpEip["type"] != "lrp" || lrpEip["ready"] != true {
		t.Errorf("router eip status %v: want 192.0.2.10 (the first free address), type lrp, ready", lrpEip)
	}
	nbctl := func(args ...string) string {
		return w.cl.central(ctx, t, "ovn-nbctl", append([]string{"--db=" + w.cl.c.Central.NBEndpoint}, args...)...)
	}
	if got := nbctl("lr-route-list", "vpc1"); !reMatch(got, `0\.0\.0\.0/0 +192\.0\.2\.1 `) {
		t.Errorf("vpc1 routes lack the default route via the site router:\n%s", got)
	}
	if got := nbctl("--columns=chassis_name", "list", "Gateway_Chassis"); !strings.Contains(got, w.cl.names[0]) {
		t.Errorf("gateway chassis %q, want %s", got, w.cl.names[0])
	}

	p1, p2 := w.underlayPod(ctx, t, 0, "p1", "net1"), w.underlayPod(ctx, t, 0, "p2", "net1")
	device := &podsim.Sandbox{Netns: w.site.DeviceNetns, Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "site-device"}}}
	applyYAML(ctx, t, eips, "kind: OvnEip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: eip-fip\nspec:\n  externalSubnet: external\n  type: nat\n")
	fipIP := netip.MustParseAddr(waitNatReady(ctx, t, eips, "eip-fip")["v4Ip"].(string))
	noPing(ctx, t, device, fipIP, "site -> the pod's EIP before the FIP")
	noPing(ctx, t, p2, siteDevice.Addr(), "pod -> site before the SNAT rule")

	applyYAML(ctx, t, fips, "kind: OvnFip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: fip1\nspec:\n  ovnEip: eip-fip\n  ipName: p1.default\n")
	if st := waitNatReady(ctx, t, fips, "fip1"); st["v4Eip"] != fipIP.String() || st["v4Ip"] != p1.IP().String() || st["vpc"] != "vpc1" {
		t.Errorf("fip1 status %v", st)
	}
	retryPing(ctx, t, device, fipIP, "site -> the pod at its EIP (FIP)")
	if n := capture(ctx, t, p1.NetnsName(), "eth0", "icmp and src host "+siteDevice.Addr().String(), func() {
		_, _ = podsim.Ping(ctx, device, fipIP)
	}); n == 0 {
		t.Errorf("the pod saw no ping from the site device through its FIP")
	}

	applyYAML(ctx, t, snats, "kind: OvnSnatRule\napiVersion: kubeovn.io/v1\nmetadata:\n  name: snat01\nspec:\n  ovnEip: eip-snat\n  vpcSubnet: net1\n")
	waitNatReady(ctx, t, snats, "snat01")
	retryPing(ctx, t, p2, siteDevice.Addr(), "pod -> site through the SNAT rule")
	if n := capture(ctx, t, w.site.DeviceNetns, "eth0", "icmp and src host 192.0.2.50", func() {
		_, _ = podsim.Ping(ctx, p2, siteDevice.Addr())
	}); n == 0 {
		t.Errorf("the site saw no packet from the SNAT EIP 192.0.2.50")
	}

	// Bad input: each refused naming the field; fip1 keeps working.
	bad := []struct {
		res            dynamic.NamespaceableResourceInterface
		name, doc, msg string
	}{
		{fips, "fip-noeip", "spec:\n  ovnEip: nothere\n  ipName: p2.default\n", "spec.ovnEip: ovn eip nothere not found"},
		{fips, "fip-dup", "spec:\n  ovnEip: eip-fip\n  ipName: p2.default\n", "spec.ovnEip: ovn eip eip-fip is already used by ovn fip fip1"},
		{fips, "fip-vpc", "spec:\n  ovnEip: eip-snat\n  ipName: p2.default\n  vpc: ovn-cluster\n", "spec.ipName: pod port p2.default is in vpc vpc1"},
		{eips, "eip-out", "spec:\n  externalSubnet: external\n  v4Ip: 10.9.9.9\n", "spec.v4Ip 10.9.9.9 is outside the external subnet external"},
		{eips, "eip-used", "spec:\n  externalSubnet: external\n  v4Ip: 192.0.2.10\n", "spec.v4Ip 192.0.2.10 is already used by ovn-eip:vpc1-external"},
	}
	for _, b := range bad {
		kind := map[bool]string{true: "OvnFip", false: "OvnEip"}[strings.HasPrefix(b.name, "fip")]
		applyYAML(ctx, t, b.res, "kind: "+kind+"\napiVersion: kubeovn.io/v1\nmetadata:\n  name: "+b.name+"\n"+b.doc)
		waitNatCondition(ctx, t, b.res, b.name, kubeovn.ConditionValidated, "False", b.msg)
	}
	w.natEvent(ctx, t, "fip-noeip", "OvnFip", "spec.ovnEip")
	retryPing(ctx, t, device, fipIP, "site -> the pod at its EIP after the refusals")
	if got := nbctl("--columns=external_ip", "find", "NAT", "type=dnat_and_snat"); strings.Count(got, "external_ip") != 1 {
		t.Errorf("dnat_and_snat rows after the refusals: %s", got)
	}

	// DNAT of one port: the site reaches p2's port 8080 at eip-dnat:8888, and nothing else.
	dnats := dyn.Resource(kubeovn.OvnDnatRuleResource)
	applyYAML(ctx, t, eips, "kind: OvnEip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: eip-dnat\nspec:\n  externalSubnet: external\n")
	dnatIP := netip.MustParseAddr(waitNatReady(ctx, t, eips, "eip-dnat")["v4Ip"].(string))
	echo := func(port uint16) error {
		return podsim.TCPEcho(ctx, podsim.Echo{ClientNetns: "/run/netns/" + w.site.DeviceNetns, ServerNetns: p2.Netns,
			Listen: netip.AddrPortFrom(p2.IP(), 8080), Dial: netip.AddrPortFrom(dnatIP, port)})
	}
	if err := echo(8888); err == nil {
		t.Errorf("site -> eip-dnat:8888 answered before the DNAT rule")
	}
	applyYAML(ctx, t, dnats, "kind: OvnDnatRule\napiVersion: kubeovn.io/v1\nmetadata:\n  name: dnat01\nspec:\n  ovnEip: eip-dnat\n  ipName: p2.default\n  protocol: tcp\n  internalPort: \"8080\"\n  externalPort: \"8888\"\n")
	if st := waitNatReady(ctx, t, dnats, "dnat01"); st["v4Eip"] != dnatIP.String() || st["v4Ip"] != p2.IP().String() || st["externalPort"] != "8888" {
		t.Errorf("dnat01 status %v", st)
	}
	eventually(ctx, t, "site -> p2:8080 at eip-dnat:8888 (DNAT)", func() bool { return echo(8888) == nil })
	if err := echo(9999); err == nil {
		t.Errorf("site -> eip-dnat:9999 answered: only port 8888 is forwarded")
	}
	applyYAML(ctx, t, dnats, "kind: OvnDnatRule\napiVersion: kubeovn.io/v1\nmetadata:\n  name: dnat02\nspec:\n  ovnEip: eip-dnat\n  ipName: p1.default\n  internalPort: \"80\"\n  externalPort: \"8888\"\n")
	waitNatCondition(ctx, t, dnats, "dnat02", kubeovn.ConditionValidated, "False", "spec.externalPort: tcp port 8888 of ovn eip eip-dnat is already used by ovn dnat rule dnat01")
	if err := dnats.Delete(ctx, "dnat01", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "dnat01's load balancer gone", func() bool {
		return !strings.Contains(nbctl("--columns=name", "list", "Load_Balancer"), "dnat01")
	})
	// The waiting dnat02 takes the port over (before the restart below: it must find it done).
	if st := waitNatReady(ctx, t, dnats, "dnat02"); st["v4Ip"] != p1.IP().String() {
		t.Errorf("dnat02 status %v, want p1's address", st)
	}

	natRestart(ctx, t, w)
	retryPing(ctx, t, device, fipIP, "site -> the pod at its EIP after the restart")
	// The restart's IPAM reconcile kept the EIPs' addresses (their claims): eip-fip's is taken.
	applyYAML(ctx, t, eips, "kind: OvnEip\napiVersion: kubeovn.io/v1\nmetadata:\n  name: eip-after\nspec:\n  externalSubnet: external\n  v4Ip: "+fipIP.String()+"\n")
	waitNatCondition(ctx, t, eips, "eip-after", kubeovn.ConditionValidated, "False", "is already used by ovn-eip:eip-fip")

	// fip-dup waits for eip-fip: it would take it over when fip1 goes. Removed first.
	for _, name := range []string{"fip-dup", "fip1"} {
		if err := fips.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Both deletions may reach the controller's cache in either order: for a moment fip-dup
	// (not yet seen as deleted) may take the freed EIP, until its own deletion removes it. The
	// end state is what counts: no NAT row with the EIP, and the site's pings unanswered once
	// the datapath follows (northd, the southbound, ovn-controller's flows).
	eventually(ctx, t, "fip1's and fip-dup's rows gone (no NAT row with the EIP)", func() bool {
		return !strings.Contains(nbctl("--columns=external_ip", "find", "NAT", "type=dnat_and_snat"), fipIP.String())
	})
	unreachableSoon(ctx, t, device, fipIP, "site -> the pod's EIP after the FIP's deletion")
	if got := nbctl("--columns=external_ip", "find", "NAT", "type=snat"); !strings.Contains(got, "192.0.2.50") {
		t.Errorf("the SNAT rule's row went with the FIP: %s", got)
	}
}

// apiWatches is how many watches of resource kube-apiserver serves now (its
// apiserver_longrunning_requests gauge).
func apiWatches(ctx context.Context, t *testing.T, kube kubernetes.Interface, resource string) float64 {
	t.Helper()
	raw, err := kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("read kube-apiserver's /metrics: %v", err)
	}
	n := 0.0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "apiserver_longrunning_requests{") && strings.Contains(line, `resource="`+resource+`"`) &&
			strings.Contains(line, `verb="WATCH"`) {
			_, v, _ := strings.Cut(line, "} ")
			f, _ := strconv.ParseFloat(v, 64)
			n += f
		}
	}
	return n
}

// natExternalNetwork makes TestUnderlay's site the external network: the ProviderNetwork
// "site" on eth1, the Vlan v100, the Subnet "external" and the ConfigMap naming gwNodes
// (comma-separated) as external-gw-nodes.
func (w *underlayWorld) natExternalNetwork(ctx context.Context, t *testing.T, gwNodes string) {
	t.Helper()
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v100\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, natExternal)
	waitCondition(ctx, t, w.subnets, "external", "Ready", "True", "")
	if _, err := w.cl.c.Central.Kube().CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: kubeovn.ExternalGatewayConfig, Namespace: "kube-system"},
		Data: map[string]string{"enable-external-gw": "true", "external-gw-nodes": gwNodes, "type": "centralized",
			"external-gw-nic": "eth1", "external-gw-addr": "192.0.2.1/24"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// natLinkedVpc applies natVpc (vpc1 with enableExternal and its Subnet net1) and waits for
// the external link.
func (w *underlayWorld) natLinkedVpc(ctx context.Context, t *testing.T, vpcs dynamic.NamespaceableResourceInterface) {
	t.Helper()
	for _, doc := range strings.Split(natVpc, "---\n") {
		applyYAML(ctx, t, map[bool]dynamic.NamespaceableResourceInterface{true: vpcs, false: w.subnets}[strings.Contains(doc, "kind: Vpc")], doc)
	}
	waitCondition(ctx, t, w.subnets, "net1", "Ready", "True", "")
	eventually(ctx, t, "vpc1 status.enableExternal", func() bool {
		u, err := vpcs.Get(ctx, "vpc1", metav1.GetOptions{})
		on, _, _ := unstructured.NestedBool(u.Object, "status", "enableExternal")
		return err == nil && on
	})
}

// natStatus returns the object's status.
func natStatus(ctx context.Context, t *testing.T, res dynamic.NamespaceableResourceInterface, name string) map[string]any {
	t.Helper()
	u, err := res.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	return st
}

// waitNatReady waits for status.ready and returns the status.
func waitNatReady(ctx context.Context, t *testing.T, res dynamic.NamespaceableResourceInterface, name string) map[string]any {
	t.Helper()
	var st map[string]any
	eventually(ctx, t, name+" ready", func() bool {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		st, _, _ = unstructured.NestedMap(u.Object, "status")
		ready, _ := st["ready"].(bool)
		return ready
	})
	t.Logf("%s: %v", name, st)
	return st
}

// waitNatCondition waits for the object's condition typ to have status and a message holding msg.
func waitNatCondition(ctx context.Context, t *testing.T, res dynamic.NamespaceableResourceInterface, name, typ, status, msg string) {
	t.Helper()
	var last any
	eventually(ctx, t, name+" condition "+typ+"="+status+" "+msg, func() bool {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		last = conds
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == typ && m["status"] == status && strings.Contains(m["message"].(string), msg) {
				return true
			}
		}
		return false
	})
	t.Logf("%s: %s=%s %v", name, typ, status, last)
}

// natEvent waits for a Warning Event on the object (cluster-scoped: in "default") holding msg.
func (w *underlayWorld) natEvent(ctx context.Context, t *testing.T, name, kind, msg string) {
	t.Helper()
	kube := w.cl.hosts[0].kubelet.Kube
	eventually(ctx, t, "warning event on "+kind+" "+name, func() bool {
		evs, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Type == "Warning" && e.InvolvedObject.Kind == kind && strings.Contains(e.Message, msg) {
				return true
			}
		}
		return false
	})
}

// natRestart SIGKILLs edgeovn on the host and starts it again: the new controller's reconcile
// writes none of the NAT family's tables (the northbound log shows no transaction on them
// until the database has been quiet for two seconds).
func natRestart(ctx context.Context, t *testing.T, w *underlayWorld) {
	t.Helper()
	e, central := w.cl.hosts[0], w.cl.c.Central
	before, err := central.Transactions(harness.NBDatabase)
	if err != nil {
		t.Fatal(err)
	}
	e.stopDaemon(t)
	e.daemon, err = daemon.Start(ctx, e.rig, daemon.Spec{Name: "edgeovn-restarted", Node: w.cl.names[0], BinDir: w.cl.bins,
		Extra: append(append([]string{}, daemonFlags...), w.cl.extra...)})
	if err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "restarted controller running", func() bool { return strings.Contains(e.daemonLog(), "controller role running") })
	var after []harness.Transaction
	last, since := -1, time.Now()
	eventually(ctx, t, "northbound quiet for 2 s", func() bool {
		if after, err = central.Transactions(harness.NBDatabase); err != nil {
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
			switch table {
			case "NAT", "Logical_Router_Port", "Gateway_Chassis", "Load_Balancer", "Logical_Router_Static_Route":
				t.Errorf("the restart wrote %s: %s", table, tx.Raw)
			}
		}
	}
}

// unreachableSoon pings until a ping goes unanswered, for up to 10 s: after the northbound
// row goes, the datapath follows a moment later.
func unreachableSoon(ctx context.Context, t *testing.T, from *podsim.Sandbox, to netip.Addr, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := podsim.Ping(ctx, from, to)
		if err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: still reached %s 10 s after its rows went, want unreachable\n%s", what, to, out)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
