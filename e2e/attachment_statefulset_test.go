package e2e

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAttachmentsStatefulSet: a StatefulSet's pod with attachments a and b, deleted while its
// StatefulSet wants it, keeps its attachments' ports and addresses with its primary's (as
// Kube-OVN keeps them); re-created under its name it gets the same address and MAC on eth0,
// net1 and net2; once the StatefulSet is scaled below it, everything is released, the
// attachments' ports and addresses included.
func TestAttachmentsStatefulSet(t *testing.T) {
	env, ctx := startNode(t)
	ae := startAttachEnv(ctx, t, env)
	set := createStatefulSet(ctx, t, env, "db", 1)
	owned := func(p *corev1.Pod) {
		yes := true
		p.Labels = set.Spec.Template.Labels
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name,
			UID: set.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
	}
	first := ae.runAttached(ctx, t, "db-0", "a,b", owned)
	want := podIfaces(ctx, t, first.sb)
	ae.delAttached(ctx, t, first, "a,b")
	waitKept(ctx, t, env, "db-0")
	held := attachIPAM(ae.ipamList(ctx, t))
	for _, prov := range attachProviders {
		if !ae.lspExists(ctx, t, "db-0.default."+prov) || held["default/db-0 "+prov] == "" {
			t.Fatalf("db-0 gone, its StatefulSet wanting it: attachment %s's port or address released:\n%s", prov, ae.ipamList(ctx, t))
		}
	}

	again := ae.runAttached(ctx, t, "db-0", "a,b", owned)
	if got := podIfaces(ctx, t, again.sb); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("re-created db-0 has %v, had %v", got, want)
	}
	t.Logf("db-0 re-created with its addresses and MACs: %v", want)

	ae.delAttached(ctx, t, again, "a,b")
	waitKept(ctx, t, env, "db-0")
	scaleStatefulSet(ctx, t, env, "db", 0)
	waitReleased(ctx, t, env, again.sb)
	for _, prov := range attachProviders {
		eventually(ctx, t, "db-0's attachment port for "+prov+" removed", func() bool { return !ae.lspExists(ctx, t, "db-0.default."+prov) })
	}
}

// TestAttachmentsCompleted: a pod with attachments a and b whose containers stopped for good
// (a finished Job) gives back its attachments' ports and addresses with its primary's, though
// its object stays; a running pod keeps its own.
func TestAttachmentsCompleted(t *testing.T) {
	env, ctx := startNode(t)
	ae := startAttachEnv(ctx, t, env)
	keep := ae.runAttached(ctx, t, "keep", "a,b")
	job := ae.runAttached(ctx, t, "job", "a,b")
	for _, del := range []struct{ ifName, nad string }{{"net2", "b"}, {"net1", "a"}} { // the runtime's DELs, as Multus sends them
		if err := ae.kubelet.DelAttachment(ctx, job.sb, delegateConf(t, ae.nads[del.nad]), del.ifName); err != nil {
			t.Fatal(err)
		}
	}
	finish(ctx, t, env, job.sb, corev1.PodSucceeded)
	waitReleased(ctx, t, env, job.sb)
	for _, prov := range attachProviders {
		eventually(ctx, t, "the completed pod's attachment port for "+prov+" removed", func() bool { return !ae.lspExists(ctx, t, "job.default."+prov) })
		if !ae.lspExists(ctx, t, "keep.default."+prov) || attachIPAM(ae.ipamList(ctx, t))["default/keep "+prov] == "" {
			t.Fatalf("the running pod lost its attachment %s:\n%s", prov, ae.ipamList(ctx, t))
		}
	}
	if _, err := env.kubelet.Kube.CoreV1().Pods("default").Get(ctx, "job", metav1.GetOptions{}); err != nil {
		t.Fatalf("the completed pod's object must stay: %v", err)
	}
	t.Logf("job's attachments released on completion; keep still holds %v", keep.nets)
}
