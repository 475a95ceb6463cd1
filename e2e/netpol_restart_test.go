package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNetworkPolicyRestart: a policy deleted while edgeovn is down loses its rows when the
// restarted controller reconciles, which rewrites none of the rows that were right (every
// remaining port group, ACL and address set keeps its _version); traffic follows the
// remaining policies throughout. Restarted with --network-policy=false, edgeovn removes
// its policy rows and leaves traffic open though the policies still exist.
func TestNetworkPolicyRestart(t *testing.T) {
	e := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := e.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	w := startWorld(ctx, t, e)
	keep := ingress(pol("x"), from(ports(named(tcpP, "web")), nss("ns", "y")))
	keep.Name = "keep"
	gone := egress(pol("z", "pod", "a"), to(nil, pods("pod", "b")))
	gone.Name = "gone"
	w.setPolicies(ctx, t, []*networkingv1.NetworkPolicy{keep, gone})
	w.check(ctx, t, "two policies")
	before := e.policyRowVersions(ctx, t)

	e.stopDaemon(t)
	if err := e.kubelet.Kube.NetworkingV1().NetworkPolicies("z").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.policies = []*networkingv1.NetworkPolicy{keep}
	e.startDaemon(ctx, t, "edgeovn-restarted")
	eventually(ctx, t, "restarted controller running", func() bool {
		return strings.Contains(e.daemonLog(), "controller role running")
	})
	after := e.policyRowVersions(ctx, t)
	for uuid, v := range after {
		if before[uuid] != v {
			t.Errorf("restart wrote row %s (version %q, was %q)", uuid, v, before[uuid])
		}
	}
	if len(after) >= len(before) {
		t.Errorf("the deleted policy's rows survived the restart: %d rows before, %d after", len(before), len(after))
	}
	w.check(ctx, t, "after the restart, one policy deleted while down")

	e.stopDaemon(t)
	e.startDaemon(ctx, t, "edgeovn-no-policy", "--network-policy=false")
	eventually(ctx, t, "policy rows removed with --network-policy=false", func() bool {
		return len(e.policyRowVersions(ctx, t)) == 0
	})
	w.policies = nil // still in the API, but edgeovn no longer enforces them
	w.check(ctx, t, "--network-policy=false")
}

func (e *env) stopDaemon(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(e.daemon.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = e.daemon.Wait()
}

// policyRowVersions maps every policy port group, ACL and address set in NB to its _version,
// which the server changes on every write of the row (ovn-nbctl does not show it; a raw
// select does).
func (e *env) policyRowVersions(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range []string{"Port_Group", "ACL", "Address_Set"} {
		q := fmt.Sprintf(`["OVN_Northbound",{"op":"select","table":%q,"where":[],"columns":["_uuid","_version","external_ids"]}]`, table)
		b, err := e.rig.Run(ctx, "ovsdb-client", "transact", e.rig.NBEndpoint, q)
		if err != nil {
			t.Fatalf("select %s: %v\n%s", table, err, b)
		}
		var res []struct {
			Rows []struct {
				UUID        []string `json:"_uuid"`
				Version     []string `json:"_version"`
				ExternalIDs []any    `json:"external_ids"`
			} `json:"rows"`
		}
		if err := json.Unmarshal(b, &res); err != nil || len(res) != 1 {
			t.Fatalf("select %s: %v\n%s", table, err, b)
		}
		for _, r := range res[0].Rows {
			ids, _ := json.Marshal(r.ExternalIDs)
			if strings.Contains(string(ids), `"NetworkPolicy"`) || strings.Contains(string(ids), `"Namespace"`) || strings.Contains(string(ids), `"network-policy"`) {
				out[r.UUID[1]] = r.Version[1]
			}
		}
	}
	return out
}
