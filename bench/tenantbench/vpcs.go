package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
)

func vpcName(i int) string    { return fmt.Sprintf("vpc-%d", i) }
func subnetName(i int) string { return fmt.Sprintf("net-%d", i) }
func tenantNs(i int) string   { return fmt.Sprintf("tenant-%d", i) }

// vpcResult is what one VPC layout cost: the rows it added, ovn-northd's CPU from the first
// object to settled, and how long that took.
type vpcResult struct {
	vpcs      int
	nb        rowCounts // NB rows added (after - before), by table
	flows     int       // SB Logical_Flow rows added
	northd    time.Duration
	took      time.Duration
	unsettled bool // northd was still busy when the bench stopped waiting
	// rows0 and flows0 are the settled rig's NB rows and SB flows before (edgeovn's own).
	rows0, flows0 int
}

// runVpcs starts a rig of its own, waits for it to settle, then creates vpcs Vpcs (each with
// a Subnet, its defaultSubnet, and a namespace bound to it) and the pods spread over them
// round-robin, and reads what that added once ovn-northd has settled again.
func runVpcs(ctx context.Context, c config, vpcs int) (vpcResult, error) {
	t, err := startRig(ctx, c)
	if err != nil {
		return vpcResult{}, err
	}
	defer t.stop()
	r := vpcResult{vpcs: vpcs}
	northd, err := t.rig.Daemon("ovn-northd")
	if err != nil {
		return r, err
	}
	sb, err := connectSB(ctx, t.rig.SBEndpoint)
	if err != nil {
		return r, err
	}
	defer sb.Close()
	// The baseline: edgeovn's own topology (ovn-default, join, the node) written and
	// northd done with it.
	if err := t.waitDefaultSubnet(ctx); err != nil {
		return r, err
	}
	if _, _, err := t.settle(ctx, northd.PID, sb); err != nil {
		return r, err
	}
	nb0, flows0 := nbRows(t.cl.NB), sbFlows(sb)
	cpu0, err := benchkit.CPUTime(northd.PID)
	if err != nil {
		return r, err
	}
	start := time.Now()
	if err := t.tenants(ctx, vpcs); err != nil {
		return r, err
	}
	pods := podSet{n: c.pods, namespaceOf: func(i int) string { return tenantNs(i % vpcs) },
		annotationsOf: func(int) map[string]string { return nil }}
	if err := t.createPods(ctx, pods, c.pods); err != nil {
		return r, err
	}
	last, settled, err := t.settle(ctx, northd.PID, sb)
	if err != nil {
		return r, err
	}
	cpu1, err := benchkit.CPUTime(northd.PID)
	if err != nil {
		return r, err
	}
	r.took, r.unsettled = last.Sub(start), !settled
	r.rows0, r.flows0 = nb0.total(), flows0
	r.nb, r.flows, r.northd = nbRows(t.cl.NB).minus(nb0), sbFlows(sb)-flows0, cpu1-cpu0
	return r, nil
}

// waitDefaultSubnet waits for edgeovn's ovn-default Subnet to be Ready.
func (t *tenantRig) waitDefaultSubnet(ctx context.Context) error {
	return benchkit.Wait(ctx, "Subnet ovn-default Ready", 50*time.Millisecond, func() (bool, error) {
		u, err := t.dyn.Resource(kubeovn.SubnetResource).Get(ctx, "ovn-default", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == kubeovn.ConditionReady {
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
}

// tenants creates, for each VPC, a namespace, the Vpc (binding the namespace, defaultSubnet
// its Subnet) and the Subnet (10.100+i.0.0/16 on the Vpc), and waits until every namespace
// is bound to its Subnet: a pod created earlier would land in ovn-default.
func (t *tenantRig) tenants(ctx context.Context, vpcs int) error {
	for i := range vpcs {
		if err := t.namespace(ctx, tenantNs(i)); err != nil {
			return err
		}
		vpc := map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": map[string]any{"name": vpcName(i)},
			"spec": map[string]any{"namespaces": []any{tenantNs(i)}, "defaultSubnet": subnetName(i)}}
		subnet := map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": map[string]any{"name": subnetName(i)},
			"spec": map[string]any{"cidrBlock": fmt.Sprintf("10.%d.0.0/16", 100+i), "vpc": vpcName(i)}}
		if err := t.create(ctx, kubeovn.VpcResource, vpc); err != nil {
			return err
		}
		if err := t.create(ctx, kubeovn.SubnetResource, subnet); err != nil {
			return err
		}
	}
	for i := range vpcs {
		err := benchkit.Wait(ctx, fmt.Sprintf("namespace %s bound to %s", tenantNs(i), subnetName(i)), 20*time.Millisecond, func() (bool, error) {
			ns, err := t.cl.Kube.CoreV1().Namespaces().Get(ctx, tenantNs(i), metav1.GetOptions{})
			return err == nil && ns.Annotations[annotation.LogicalSwitch] == subnetName(i), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// settleQuiet is how long ovn-northd must use no CPU and the NB rows and SB logical flows
// stay as they are for the rig to count as settled; settleMax bounds the wait.
const (
	settleQuiet = time.Second
	settleMax   = 90 * time.Second
)

// settle waits until ovn-northd has used no CPU tick and the northbound rows and southbound
// logical flows have not changed for settleQuiet, and returns when the last change was seen
// (settled false: still changing after settleMax).
func (t *tenantRig) settle(ctx context.Context, pid int, sb sbCounter) (last time.Time, settled bool, err error) {
	deadline := time.Now().Add(settleMax)
	type state struct {
		cpu         time.Duration
		rows, flows int
	}
	read := func() (state, error) {
		cpu, err := benchkit.CPUTime(pid)
		return state{cpu: cpu, rows: nbRows(t.cl.NB).total(), flows: sbFlows(sb)}, err
	}
	prev, err := read()
	if err != nil {
		return time.Time{}, false, err
	}
	last = time.Now()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return last, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		now, err := read()
		if err != nil {
			return last, false, err
		}
		if now != prev {
			prev, last = now, time.Now()
		}
		if time.Since(last) >= settleQuiet {
			return last, true, nil
		}
	}
	return last, false, nil
}

// printVpcs prints both layouts side by side, per 100 pods.
func printVpcs(c config, one, many vpcResult) {
	per := func(v float64) string { return fmt.Sprintf("%.1f", v*100/float64(c.pods)) }
	fmt.Printf("\nOVN rows and ovn-northd CPU per 100 pods, %d pods in 1 custom VPC against spread over %d "+
		"(each a Vpc with one Subnet and a namespace bound to it; a rig of its own each, one host, userspace datapath); "+
		"what the VPCs and pods added, counted once ovn-northd settled\n\n", c.pods, c.vpcs)
	fmt.Printf("| per 100 pods | 1 VPC | %d VPCs |\n|---|---:|---:|\n", c.vpcs)
	fmt.Printf("| NB rows, all tables | %s | %s |\n", per(float64(one.nb.total())), per(float64(many.nb.total())))
	for _, table := range tablesOf(one.nb, many.nb) {
		fmt.Printf("| NB %s | %s | %s |\n", table, per(float64(one.nb[table])), per(float64(many.nb[table])))
	}
	fmt.Printf("| SB Logical_Flow | %s | %s |\n", per(float64(one.flows)), per(float64(many.flows)))
	fmt.Printf("| ovn-northd CPU (utime+stime), first object to settled | %s ms | %s ms |\n",
		per(float64(one.northd.Milliseconds())), per(float64(many.northd.Milliseconds())))
	fmt.Printf("\nfirst object to the last change (northd CPU, NB rows, SB flows): 1 VPC %.1f s, %d VPCs %.1f s (settled: nothing changed for %s after it)\n",
		one.took.Seconds(), c.vpcs, many.took.Seconds(), settleQuiet)
	fmt.Printf("the rig before (edgeovn's default VPC, join and node): %d NB rows, %d logical flows\n", one.rows0, one.flows0)
	for _, r := range []vpcResult{one, many} {
		if r.unsettled {
			fmt.Printf("warning: with %d VPC(s) ovn-northd had not settled after %s: its CPU is a lower bound\n", r.vpcs, settleMax)
		}
	}
	fmt.Printf("load average after this part: %s\n", benchkit.LoadAvg())
}
