package securitygroups

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

var (
	readyConds = []string{"Error=False NoError", "Ready=True SecurityGroupReady", "Validated=True SecurityGroupReady"}
	// web lets TCP 80 in from 10.42.0.0/16 and drops ICMP from one address.
	web = kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{
		{IPVersion: "ipv4", Protocol: "tcp", Priority: 10, RemoteType: "address", RemoteAddress: "10.42.0.0/16", PortRangeMin: 80, PortRangeMax: 80, Policy: "allow"},
		{IPVersion: "ipv4", Protocol: "icmp", Priority: 1, RemoteType: "address", RemoteAddress: "10.42.0.9", Policy: "drop"}}}
	webRules = []string{
		"pgacl ovn.sg.web to-lport 18474 allow-related outport == @ovn.sg.web && ip4 && ip4.src == 10.42.0.0/16 && 80 <= tcp.dst <= 80",
		"pgacl ovn.sg.web to-lport 18483 drop outport == @ovn.sg.web && ip4 && ip4.src == 10.42.0.9 && icmp4",
	}
	// The members: a in web, b in web and db, c in a group that does not exist.
	members = []*corev1.Pod{pod("a", "10.42.0.2", "web"), pod("b", "10.42.0.3", "db, web"), pod("c", "10.42.0.4", "nope")}
	webRows = []string{"pg ovn.sg.web a.ns b.ns", "addrset ovn.sg.web.associated.v4 10.42.0.2 10.42.0.3", "addrset ovn.sg.web.associated.v6"}
	dbRows  = []string{"pg ovn.sg.db b.ns", "addrset ovn.sg.db.associated.v4 10.42.0.3", "addrset ovn.sg.db.associated.v6",
		"pgacl ovn.sg.db to-lport 2004 allow-related outport == @ovn.sg.db && ip4 && ip4.src == $ovn.sg.db.associated.v4",
		"pgacl ovn.sg.db to-lport 2004 allow-related outport == @ovn.sg.db && ip6 && ip6.src == $ovn.sg.db.associated.v6",
		"pgacl ovn.sg.db from-lport 2004 allow-related inport == @ovn.sg.db && ip4 && ip4.dst == $ovn.sg.db.associated.v4",
		"pgacl ovn.sg.db from-lport 2004 allow-related inport == @ovn.sg.db && ip6 && ip6.dst == $ovn.sg.db.associated.v6"}
	missingPodEvent = "Warning SecurityGroupNotFound ns/c: ovn.kubernetes.io/security_groups: security group nope not found"
)

func refused(reason string) []string {
	return []string{"Error=True " + reason, "Ready=False " + reason, "Validated=False " + reason}
}

func rules(rs ...kubeovn.SecurityGroupRule) kubeovn.SecurityGroupSpec {
	return kubeovn.SecurityGroupSpec{IngressRules: rs}
}

// TestSecurityGroupValidateApply: {groups, pods, a change of web} -> {the port groups, ACLs
// and address sets, web's conditions, Events}. A refused spec names its field in a condition
// and one Event and keeps the rules applied before (or only the fence when none were), and db
// as it was; the members follow the pods either way.
func TestSecurityGroupValidateApply(t *testing.T) {
	bad := web.IngressRules[0]
	bad.PortRangeMin = 90
	tests := []struct {
		name   string
		spec   kubeovn.SecurityGroupSpec
		change func(*kubeovn.SecurityGroupSpec) // applied after the first sync, nil: none
		rows   []string                         // web's rules
		conds  []string
		events []string
	}{{
		name: "an allow by port and a drop by address", spec: web, rows: webRules, conds: readyConds,
	}, {
		name:   "portRangeMin above portRangeMax is refused naming the field: only the fence",
		spec:   rules(bad),
		conds:  refused(ReasonInvalidSpec),
		events: []string{"Warning InvalidSpec web: invalid security group spec: ingressRules[0].portRangeMin 90 is greater than portRangeMax 80"},
	}, {
		name:   "a refused change keeps the rules applied before",
		spec:   web,
		change: func(s *kubeovn.SecurityGroupSpec) { s.IngressRules[1].Priority = 20000 },
		rows:   webRules,
		conds:  refused(ReasonInvalidSpec),
		events: []string{"Warning InvalidSpec web: invalid security group spec: ingressRules[1].priority 20000 is out of range 1-16384"},
	}, {
		name:   "an unknown protocol is refused naming the field",
		spec:   rules(kubeovn.SecurityGroupRule{IPVersion: "ipv4", Protocol: "gre", Priority: 1, RemoteType: "address", RemoteAddress: "10.0.0.1", Policy: "allow"}),
		conds:  refused(ReasonInvalidSpec),
		events: []string{`Warning InvalidSpec web: invalid security group spec: ingressRules[0].protocol "gre"`},
	}, {
		name:   "a remote group that does not exist is refused naming the field",
		spec:   rules(kubeovn.SecurityGroupRule{IPVersion: "ipv4", Priority: 1, RemoteType: "securityGroup", RemoteSecurityGroup: "nope", Policy: "allow"}),
		conds:  refused(ReasonRemoteNotFound),
		events: []string{"Warning RemoteSecurityGroupNotFound web: remote security group not found: ingressRules[0].remoteSecurityGroup: security group nope not found"},
	}, {
		name:  "a remote group that exists: its address set",
		spec:  rules(kubeovn.SecurityGroupRule{IPVersion: "ipv4", Priority: 5, RemoteType: "securityGroup", RemoteSecurityGroup: "db", Policy: "allow"}),
		rows:  []string{"pgacl ovn.sg.web to-lport 18479 allow-related outport == @ovn.sg.web && ip4 && ip4.src == $ovn.sg.db.associated.v4"},
		conds: readyConds,
	}, {
		name:   "a rule removed leaves the port group",
		spec:   web,
		change: func(s *kubeovn.SecurityGroupSpec) { s.IngressRules = s.IngressRules[:1] },
		rows:   webRules[:1],
		conds:  readyConds,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := ctltest.SecurityGroup(t, "db", kubeovn.SecurityGroupSpec{AllowSameGroupTraffic: true})
			r := newRig(t, members, ctltest.SecurityGroup(t, "web", tt.spec), db)
			if tt.change != nil {
				r.update("web", tt.change)
			}
			want := append(append(slices.Clone(tt.rows), webRows...), dbRows...)
			if d := ctltest.Diff(r.rows(), want); d != "" {
				t.Errorf("rows:%s", d)
			}
			sg, conds := r.group("web")
			if d := ctltest.Diff(conds, tt.conds); d != "" {
				t.Errorf("web conditions:%s", d)
			}
			ok := slices.Equal(conds, readyConds)
			if !slices.Equal(sg.Finalizers, []string{Finalizer}) || sg.Status.PortGroup != "ovn.sg.web" ||
				sg.Status.IngressLastSyncSuccess != ok || sg.Status.EgressLastSyncSuccess != ok || (ok && sg.Status.IngressMd5 == "") {
				t.Errorf("web finalizers %v, status %+v", sg.Finalizers, sg.Status)
			}
			events := append(slices.Clone(tt.events), missingPodEvent) // the start's syncs, then the pods
			if tt.change != nil {
				events = append([]string{missingPodEvent}, tt.events...)
			}
			r.rec.Check(t, events)
		})
	}
}

// TestSecurityGroupMembers: a pod's annotation puts its port in each group it names and its
// address in the group's set; changed, the pod moves; the fence (drop) is on every group.
func TestSecurityGroupMembers(t *testing.T) {
	r := newRig(t, members, ctltest.SecurityGroup(t, "web", web), ctltest.SecurityGroup(t, "db", kubeovn.SecurityGroupSpec{AllowSameGroupTraffic: true}))
	if d := ctltest.Diff(r.rows(), append(append(slices.Clone(webRules), webRows...), dbRows...)); d != "" {
		t.Errorf("rows:%s", d)
	}
	fence := r.nb.PortGroupRows(t)
	for _, want := range []string{"pgacl ovn.sg.web to-lport 2003 drop outport == @ovn.sg.web && ip", "pgacl ovn.sg.db from-lport 2003 drop inport == @ovn.sg.db && ip",
		"pgacl ovn.sg.web to-lport 18500 allow-related outport == @ovn.sg.web && ip4.src == 100.64.0.0/16"} {
		if !slices.Contains(fence, want) {
			t.Errorf("rows lack %q", want)
		}
	}
	r.setPodGroups("b", "db")
	r.setPodGroups("a", "")
	want := append(slices.Clone(webRules), "pg ovn.sg.web", "addrset ovn.sg.web.associated.v4", "addrset ovn.sg.web.associated.v6")
	if d := ctltest.Diff(r.rows(), append(want, dbRows...)); d != "" {
		t.Errorf("rows after the pods left web:%s", d)
	}
}

// TestSecurityGroupRestartWritesNothing: a new term over the same groups and pods writes no
// northbound row and no status.
func TestSecurityGroupRestartWritesNothing(t *testing.T) {
	r := newRig(t, members, ctltest.SecurityGroup(t, "web", web), ctltest.SecurityGroup(t, "db", kubeovn.SecurityGroupSpec{AllowSameGroupTraffic: true}))
	before := r.nb.Client.Stats().Transactions
	actions := len(r.dyn.Actions())
	r.start()
	if n := r.nb.Client.Stats().Transactions - before; n != 0 {
		t.Errorf("restart wrote %d northbound transactions, want 0", n)
	}
	for _, a := range r.dyn.Actions()[actions:] {
		if v := a.GetVerb(); v != "list" && v != "watch" && v != "get" {
			t.Errorf("restart wrote to the API: %s %s", v, a.GetResource().Resource)
		}
	}
}

// TestSecurityGroupDelete: a deleted group is held while another group's rule names it; once
// none does, its rows go and the finalizer is removed; the other group's rows stay. A group
// deleted while no controller ran loses its rows at the next term's reconcile.
func TestSecurityGroupDelete(t *testing.T) {
	ref := rules(kubeovn.SecurityGroupRule{IPVersion: "ipv4", Priority: 5, RemoteType: "securityGroup", RemoteSecurityGroup: "db", Policy: "allow"})
	r := newRig(t, members, ctltest.SecurityGroup(t, "web", ref), ctltest.SecurityGroup(t, "db", kubeovn.SecurityGroupSpec{AllowSameGroupTraffic: true}))
	r.remove("db")
	if _, conds := r.group("db"); !slices.Contains(conds, "Ready=False SecurityGroupInUse") {
		t.Errorf("db conditions %v, want Ready=False SecurityGroupInUse", conds)
	}
	if !slices.Contains(r.rows(), "pg ovn.sg.db b.ns") {
		t.Errorf("db's rows went while web names it:\n%v", r.rows())
	}
	r.update("web", func(s *kubeovn.SecurityGroupSpec) { s.IngressRules = nil })
	r.sync("db")
	if sg, _ := r.group("db"); len(sg.Finalizers) != 0 {
		t.Errorf("db finalizers %v, want none", sg.Finalizers)
	}
	if d := ctltest.Diff(r.rows(), webRows); d != "" {
		t.Errorf("rows after db went:%s", d)
	}
	// web deleted while no controller runs: the next term removes its rows.
	if err := r.dyn.Resource(kubeovn.SecurityGroupResource).Delete(r.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.start()
	if d := ctltest.Diff(r.rows(), nil); d != "" {
		t.Errorf("rows after web was deleted while no controller ran:%s", d)
	}
}
