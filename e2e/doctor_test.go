package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// metricsAddress is the daemon's default metrics-address, inside the rig's namespace.
const metricsAddress = "127.0.0.1:10665"

// TestStatusDoctorMetrics, on a node edgeovn wired (a pod, ovn0 bound, this host leading):
// /metrics counts what happened; `edgeovn status` names the role, readiness and the subnets'
// usage; `edgeovn doctor` passes; then each of two things a person breaks by hand (a conflist
// that sorts before edgeovn's, a dead ovn-controller) makes doctor fail naming that check and
// its fix, and passes again once repaired. /readyz follows ovn-controller too.
func TestStatusDoctorMetrics(t *testing.T) {
	env, ctx := startNode(t)
	runPod(ctx, t, env, "web")
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })

	metrics := httpGet(ctx, t, env, "/metrics")
	for _, want := range []string{`edgeovn_cni_request_duration_seconds_count{result="ok",verb="ADD"} 1`,
		"edgeovn_controller_leader 1", `edgeovn_ipam_addresses_used{cidr="10.42.0.0/16",subnet="ovn-default"} 1`,
		`edgeovn_ipam_allocations_total{subnet="ovn-default"}`, `edgeovn_ovsdb_transactions_total{db="OVN_Northbound"}`,
		`edgeovn_controller_reconciles_total{kind="pod",result="ok"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	status, err := env.command(ctx, "status")
	if err != nil || !strings.Contains(status, "node and controller") || !strings.Contains(status, "ready (http://"+metricsAddress) ||
		!strings.Contains(status, "ovn-default") {
		t.Errorf("edgeovn status: %v\n%s", err, status)
	}
	t.Logf("edgeovn status:\n%s", status)
	env.doctorPasses(ctx, t)

	shadow := filepath.Join(env.kubelet.ConfDir, "00-other.conflist")
	if err := os.WriteFile(shadow, []byte(`{"cniVersion":"1.0.0","name":"other","plugins":[{"type":"bridge"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env.doctorFails(ctx, t, "cni config", "fix: move 00-other.conflist out of")
	if err := os.Remove(shadow); err != nil {
		t.Fatal(err)
	}
	env.doctorPasses(ctx, t)

	p, err := env.rig.Daemon("ovn-controller")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()
	// The daemon reports not ready for the same reason: it fails too, pointing at the cause.
	env.doctorFails(ctx, t, "ovn-controller", "fix: systemctl restart ovn-host", "edgeovn daemon")
	if body := httpGet(ctx, t, env, "/readyz"); !strings.Contains(body, "503") || !strings.Contains(body, "ovn-controller") {
		t.Errorf("/readyz without ovn-controller: %s", body)
	}
	if _, err := env.rig.RestartDaemon(ctx, "ovn-controller"); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "/readyz back", func() bool { return strings.HasPrefix(httpGet(ctx, t, env, "/readyz"), "200 ") })
	env.doctorPasses(ctx, t)
}

// command runs an edgeovn subcommand in the rig's namespace (and its OVS/OVN run
// directories) with the flags the daemon was started with, and no config file.
func (e *env) command(ctx context.Context, name string) (string, error) {
	k := e.kubelet
	out, err := e.rig.Run(ctx, e.bin, name, "--config=/dev/null", "--node-name="+node, "--kubeconfig="+e.rig.Kubeconfig,
		"--ovn-nb="+e.rig.NBEndpoint, "--ovn-sb="+e.rig.SBEndpoint, "--ovs-db="+e.rig.OVSEndpoint,
		"--ipam-db="+e.ipamDB, "--cni-socket="+filepath.Join(e.rig.Dir, "cni.sock"),
		"--cni-conf-dir="+k.ConfDir, "--cni-bin-dir="+k.BinDir)
	return string(out), err
}

// doctorPasses waits until doctor passes (a repair takes effect within a few seconds) and
// checks that it then reports no failure.
func (e *env) doctorPasses(ctx context.Context, t *testing.T) {
	t.Helper()
	var out string
	var err error
	eventually(ctx, t, "edgeovn doctor passes", func() bool {
		out, err = e.command(ctx, "doctor")
		return err == nil
	})
	if strings.Contains(out, "FAIL") || strings.Count(out, "[  ok]") < 12 {
		t.Fatalf("edgeovn doctor passed with:\n%s", out)
	}
	t.Logf("edgeovn doctor:\n%s", out)
}

// doctorFails checks that doctor exits non-zero, names the check and says how to fix it, and
// that every other check passes but those that follow from it.
func (e *env) doctorFails(ctx context.Context, t *testing.T, check, fix string, following ...string) {
	t.Helper()
	out, err := e.command(ctx, "doctor")
	if err == nil || !strings.Contains(out, fmt.Sprintf("[FAIL] %-22s", check)) || !strings.Contains(out, fix) {
		t.Fatalf("edgeovn doctor with %s broken: %v\n%s", check, err, out)
	}
	for _, f := range following {
		if !strings.Contains(out, fmt.Sprintf("[FAIL] %-22s", f)) {
			t.Errorf("doctor with %s broken does not fail %s too:\n%s", check, f, out)
		}
	}
	if n := strings.Count(out, "[FAIL]"); n != 1+len(following) {
		t.Errorf("doctor failed %d checks for one broken thing:\n%s", n, out)
	}
	t.Logf("edgeovn doctor with %s broken:\n%s", check, out)
}

// httpGet fetches path from the daemon's metrics address in the rig's namespace and returns
// "<code> <body>".
func httpGet(ctx context.Context, t *testing.T, env *env, path string) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return env.rig.DialContext(ctx, network, metricsAddress)
		}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddress+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}
