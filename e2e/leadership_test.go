package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestIneligibleHostNeverLeads runs two edgeovn processes against one API server: the rig's
// host, and a second host whose northbound address is a socket that does not exist. The
// second never campaigns and says why in its log and on /controller (what `edgeovn status`
// prints); even with the Lease released by the first host's stop it does not take it. Once its
// northbound address answers (the socket appears), it campaigns, leads and allocates.
func TestIneligibleHostNeverLeads(t *testing.T) {
	env, ctx := startNode(t)
	eventually(ctx, t, "the rig's host leads", func() bool { return leaseHolder(ctx, env.rig) == node })

	b := daemon.Standby{Name: "host-b", MetricsPort: 10666}
	nbLink := filepath.Join(b.Dir(env.rig), "nb.sock")
	b.NBEndpoint = "unix:" + nbLink
	pb := env.startStandby(ctx, t, b)
	eventually(ctx, t, "host-b says why it does not campaign", func() bool {
		return logHas(pb, "not campaigning for the controller Lease") && logHas(pb, "OVN_Northbound unreachable")
	})
	state := controllerState(ctx, t, env, b.MetricsAddress())
	if !strings.HasPrefix(state, "ineligible: OVN_Northbound unreachable: "+b.NBEndpoint) {
		t.Fatalf("host-b /controller: %q, want ineligible naming its northbound endpoint", state)
	}
	if !strings.HasPrefix(controllerState(ctx, t, env, metricsAddress), "leader") {
		t.Fatalf("rig host /controller: %q", controllerState(ctx, t, env, metricsAddress))
	}

	// The leader stops cleanly and releases the Lease: an ineligible host still leaves it.
	if err := env.daemon.Stop(); err != nil {
		t.Logf("stop %s: %v", env.daemon.Name, err)
	}
	eventually(ctx, t, "lease released by the stopped leader", func() bool { return leaseHolder(ctx, env.rig) == "" })
	for range 3 { // three lease durations of the suite's timings
		time.Sleep(4 * time.Second)
		if h := leaseHolder(ctx, env.rig); h != "" {
			t.Fatalf("lease taken by %q while host-b cannot reach northbound", h)
		}
	}

	// Northbound becomes reachable at host-b's address: it campaigns again and leads.
	if err := os.Symlink(strings.TrimPrefix(env.rig.NBEndpoint, "unix:"), nbLink); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "host-b leads once northbound answers", func() bool { return leaseHolder(ctx, env.rig) == b.Name })
	if !logHas(pb, "eligible for the controller role again") {
		t.Error("host-b did not log that it became eligible")
	}
	pod := env.apiPod(ctx, t, "after-b-leads", nil)
	eventually(ctx, t, "host-b allocates a new pod", func() bool {
		p, err := env.rig.Kube().CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		_, err = annotation.Decode(p.Annotations)
		return err == nil
	})
	if s := controllerState(ctx, t, env, b.MetricsAddress()); s != "leader" {
		t.Errorf("host-b /controller while leading: %q", s)
	}
}

// controllerState GETs /controller from a daemon's metrics address in the rig.
func controllerState(ctx context.Context, t *testing.T, env *env, address string) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: env.rig.DialContext}, Timeout: 5 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+"/controller", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s/controller: %v", address, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(body))
}
