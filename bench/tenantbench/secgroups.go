package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/secgroup"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

const sgNamespace = "sg"

func groupName(i int) string { return fmt.Sprintf("sg-%d", i) }

// togglePriority is the priority of the rule a change adds and removes: TCP 80 from the pod
// network. No other rule of the bench opens port 80 to a pod in no group.
const togglePriority = 10

func ingressRule(priority int, port int, remote map[string]any) map[string]any {
	r := map[string]any{"ipVersion": "ipv4", "protocol": "tcp", "priority": int64(priority),
		"portRangeMin": int64(port), "portRangeMax": int64(port), "policy": "allow"}
	for k, v := range remote {
		r[k] = v
	}
	return r
}

// rules are group i's ingress rules: TCP 8080 from the pod network (sg-0) or from sg-0's
// members (the others: an address set in use), and with on the toggled rule.
func rules(i int, on bool) []any {
	base := ingressRule(20, 8080, map[string]any{"remoteType": "securityGroup", "remoteSecurityGroup": groupName(0)})
	if i == 0 {
		base = ingressRule(20, 8080, map[string]any{"remoteType": "address", "remoteAddress": "10.42.0.0/16"})
	}
	r := []any{base}
	if on {
		r = append(r, ingressRule(togglePriority, 80, map[string]any{"remoteType": "address", "remoteAddress": "10.42.0.0/16"}))
	}
	return r
}

// sgResult is what the security group part measured.
type sgResult struct {
	setup                    time.Duration // groups and pods created to every member in its port group
	acls, sets, portGroups   int           // the groups' rows in NB
	nbOn, nbOff, onAt, offAt []time.Duration
}

// runSecurityGroups creates the groups and pods, a probe server in every group and a client
// in none, and times rule changes: each from the API write to the ACL row in NB (or gone) and
// to the client's TCP probe to the server on 80 getting through (or dropped).
func runSecurityGroups(ctx context.Context, c config) (sgResult, error) {
	t, err := startRig(ctx, c)
	if err != nil {
		return sgResult{}, err
	}
	defer t.stop()
	var r sgResult
	start := time.Now()
	if err := t.groupsAndPods(ctx, c); err != nil {
		return r, err
	}
	r.setup = time.Since(start)
	client, server, err := t.probePods(ctx, c)
	if err != nil {
		return r, err
	}
	to := netip.AddrPortFrom(server.IP(), 80)
	// Warm up (not timed): the path works, and the rule is what opens it.
	for _, on := range []bool{true, false} {
		if err := t.patchSpec(ctx, kubeovn.SecurityGroupResource, groupName(0), map[string]any{"ingressRules": rules(0, on)}); err != nil {
			return r, err
		}
		if _, err := benchkit.ProbeUntil(ctx, client, to, on); err != nil {
			return r, fmt.Errorf("warm-up: %w", err)
		}
	}
	for round := range c.rounds {
		g := round % c.groups
		for _, on := range []bool{true, false} {
			nb, probe, err := t.change(ctx, g, on, client, to)
			if err != nil {
				return r, fmt.Errorf("round %d, %s: %w", round, groupName(g), err)
			}
			if on {
				r.nbOn, r.onAt = append(r.nbOn, nb), append(r.onAt, probe)
			} else {
				r.nbOff, r.offAt = append(r.nbOff, nb), append(r.offAt, probe)
			}
		}
	}
	r.acls, r.sets, r.portGroups, err = t.groupRows(ctx)
	return r, err
}

// change adds (on) or removes the toggled rule of group g and returns the times from the API
// write's start to the rule's ACL in NB (or gone) and to the start of the first probe with the
// new outcome (an opening is probed in parallel, every benchkit.ProbeEvery: one after the other,
// each dropped probe would hold the next back by its timeout).
func (t *tenantRig) change(ctx context.Context, g int, on bool, client *podsim.Sandbox, to netip.AddrPort) (nb, probe time.Duration, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan time.Time, 1)
	start := time.Now()
	go func() {
		err := benchkit.Wait(wctx, "the rule's ACL", time.Millisecond, func() (bool, error) {
			has, err := t.hasToggled(wctx, groupName(g))
			return has == on, err
		})
		if err != nil {
			seen <- time.Time{}
			return
		}
		seen <- time.Now()
	}()
	if err := t.patchSpec(ctx, kubeovn.SecurityGroupResource, groupName(g), map[string]any{"ingressRules": rules(g, on)}); err != nil {
		return 0, 0, err
	}
	var at time.Time
	if on {
		at, err = benchkit.ProbeOpened(ctx, client, to)
	} else {
		at, err = benchkit.ProbeUntil(ctx, client, to, false)
	}
	if err != nil {
		return 0, 0, err
	}
	select {
	case nbAt := <-seen:
		if nbAt.IsZero() {
			return 0, 0, fmt.Errorf("watch the ACL of %s's rule in NB: stopped", groupName(g))
		}
		return nbAt.Sub(start), at.Sub(start), nil
	case <-time.After(30 * time.Second):
		return 0, 0, fmt.Errorf("the probe flipped, the ACL of %s's rule in NB did not", groupName(g))
	}
}

// hasToggled says whether NB holds group's ACL of the toggled rule.
func (t *tenantRig) hasToggled(ctx context.Context, group string) (bool, error) {
	var acls []*nbdb.ACL
	prio := secgroup.RulePriority(togglePriority)
	err := t.cl.NB.WhereCache(func(a *nbdb.ACL) bool {
		return a.Priority == prio && a.ExternalIDs[ovn.OwnerKindKey] == ovn.KindSecurityGroup && a.ExternalIDs[ovn.OwnerKey] == group
	}).List(ctx, &acls)
	return len(acls) > 0, err
}

// groupsAndPods creates the groups (sg-0 first: the others name it), waits for each to be
// Ready, then creates the pods, pod i in group i mod groups, and waits for every one in its
// group's port group.
func (t *tenantRig) groupsAndPods(ctx context.Context, c config) error {
	if err := t.namespace(ctx, sgNamespace); err != nil {
		return err
	}
	for i := range c.groups {
		obj := map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "SecurityGroup", "metadata": map[string]any{"name": groupName(i)},
			"spec": map[string]any{"allowSameGroupTraffic": true, "ingressRules": rules(i, false)}}
		if err := t.create(ctx, kubeovn.SecurityGroupResource, obj); err != nil {
			return err
		}
	}
	for i := range c.groups {
		if err := t.waitGroupReady(ctx, groupName(i)); err != nil {
			return err
		}
	}
	pods := podSet{n: c.pods, namespaceOf: func(int) string { return sgNamespace },
		annotationsOf: func(i int) map[string]string {
			return map[string]string{annotation.SecurityGroups: groupName(i % c.groups)}
		}}
	if err := t.createPods(ctx, pods, c.pods); err != nil {
		return err
	}
	return benchkit.Wait(ctx, fmt.Sprintf("%d members in the groups' port groups", c.pods), 10*time.Millisecond, func() (bool, error) {
		var pgs []*nbdb.PortGroup
		err := t.cl.NB.WhereCache(func(p *nbdb.PortGroup) bool { return p.ExternalIDs[ovn.OwnerKindKey] == ovn.KindSecurityGroup }).List(ctx, &pgs)
		n := 0
		for _, pg := range pgs {
			n += len(pg.Ports)
		}
		return n >= c.pods, err
	})
}

func (t *tenantRig) waitGroupReady(ctx context.Context, name string) error {
	return benchkit.Wait(ctx, "security group "+name+" Ready", 20*time.Millisecond, func() (bool, error) {
		u, err := t.dyn.Resource(kubeovn.SecurityGroupResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		sg, err := kubeovn.SecurityGroupFrom(u)
		if err != nil {
			return false, err
		}
		for _, cond := range sg.Status.Conditions {
			if cond.Type == kubeovn.ConditionReady {
				return cond.Status == "True", nil
			}
		}
		return false, nil
	})
}

// probePods runs the client (in no group) and the server (in every group, serving TCP 80)
// as real sandboxes.
func (t *tenantRig) probePods(ctx context.Context, c config) (client, server *podsim.Sandbox, err error) {
	all := make([]string, c.groups)
	for i := range all {
		all[i] = groupName(i)
	}
	if server, err = t.sandbox(ctx, sgNamespace, "server", map[string]string{annotation.SecurityGroups: strings.Join(all, ",")}); err != nil {
		return nil, nil, err
	}
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: server.Netns, Port: 80, Name: "server"})
	if err != nil {
		return nil, nil, err
	}
	t.undo = append(t.undo, func() { _ = srv.Close() })
	if client, err = t.sandbox(ctx, sgNamespace, "client", nil); err != nil {
		return nil, nil, err
	}
	return client, server, nil
}

// groupRows counts the groups' ACLs, address sets and port groups in NB.
func (t *tenantRig) groupRows(ctx context.Context) (acls, sets, pgs int, err error) {
	owned := func(ids map[string]string) bool { return ids[ovn.OwnerKindKey] == ovn.KindSecurityGroup }
	var a []*nbdb.ACL
	var s []*nbdb.AddressSet
	var p []*nbdb.PortGroup
	if err = t.cl.NB.WhereCache(func(r *nbdb.ACL) bool { return owned(r.ExternalIDs) }).List(ctx, &a); err != nil {
		return
	}
	if err = t.cl.NB.WhereCache(func(r *nbdb.AddressSet) bool { return owned(r.ExternalIDs) }).List(ctx, &s); err != nil {
		return
	}
	err = t.cl.NB.WhereCache(func(r *nbdb.PortGroup) bool { return owned(r.ExternalIDs) }).List(ctx, &p)
	return len(a), len(s), len(p), err
}

func (r sgResult) print(c config) {
	fmt.Printf("\nSecurityGroup rule change to effect, one host (userspace datapath): %d pods in %d groups (pod i in sg-(i mod %d)), "+
		"a probe server in every group and a client in none; %d changes each way, one group at a time (round-robin)\n\n", c.pods, c.groups, c.groups, c.rounds)
	fmt.Printf("setup: groups Ready and %d pods in their port groups in %.1f s; the groups' rows in NB: %d ACLs, %d address sets, %d port groups\n\n",
		c.pods, r.setup.Seconds(), r.acls, r.sets, r.portGroups)
	fmt.Println("| change (ingress allow TCP 80 from the pod network) | effect | p50 | p95 | max | samples |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, row := range []struct {
		change, effect string
		d              []time.Duration
	}{
		{"rule added", "API write to the rule's ACL in NB", r.nbOn},
		{"rule added", fmt.Sprintf("API write to the client's first TCP probe that got through (one started every %s)", benchkit.ProbeEvery), r.onAt},
		{"rule removed", "API write to the rule's ACL gone from NB", r.nbOff},
		{"rule removed", fmt.Sprintf("API write to the first probe dropped (probes one after the other, timeout %s)", benchkit.ProbeTimeout), r.offAt},
	} {
		fmt.Printf("| %s | %s | %s | %s | %s | %d |\n", row.change, row.effect,
			benchkit.Ms(benchkit.Pct(row.d, 50)), benchkit.Ms(benchkit.Pct(row.d, 95)), benchkit.Ms(benchkit.Pct(row.d, 100)), len(row.d))
	}
	fmt.Printf("\nload average after this part: %s\n", benchkit.LoadAvg())
}
