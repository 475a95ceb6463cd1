package e2e

import (
	"testing"

	"github.com/edgeovn/edgeovn/e2e/realpods"
)

func TestRealNodeSmoke(t *testing.T) {
	e, ctx := startRealNode(t)
	p, err := realpods.Create(ctx, e.rig.Kube(), realpods.TestServerPod("default", "smoke", node))
	if err != nil {
		t.Fatal(err)
	}
	p, err = realpods.Wait(ctx, e.rig.Kube(), p.Namespace, p.Name, realpods.Ready)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pod %s ip %s", p.Name, p.Status.PodIP)
}
