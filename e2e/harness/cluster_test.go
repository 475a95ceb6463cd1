package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestCluster is the multi-host rig's self-test: three hosts reach the API server through
// their own kubeconfig over the underlay (TCP from a host's kernel through its br-phy), three
// pods on one logical switch, one per host, ping each other over Geneve tunnels on the
// userspace datapath, and Close leaves no process, namespace or directory behind.
func TestCluster(t *testing.T) {
	if err := PreflightCluster(); err != nil {
		skip.Now(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := StartCluster(ctx, ClusterOptions{Hosts: 3})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	t.Logf("cluster of %d hosts up in %v (under load)", len(c.Hosts), time.Since(start).Round(time.Millisecond))

	pods := make([]testPod, len(c.Hosts))
	run(t, ctx, c.Central, "ovn-nbctl", "--db="+c.Central.NBEndpoint, "ls-add", "sw0")
	for i, h := range c.Hosts {
		checkKubeconfig(t, ctx, h)
		configureChassisAs(t, ctx, h, fmt.Sprintf("host-%d", i+1), h.NodeIP.String())
		pods[i] = testPod{name: fmt.Sprintf("p%d", i+1), mac: fmt.Sprintf("0a:58:0a:2a:00:%02x", i+10),
			ip: fmt.Sprintf("10.42.0.%d", i+10), netns: fmt.Sprintf("%s-p%d", h.Netns, i+1)}
		addPod(t, ctx, h, pods[i])
	}
	for i, h := range c.Hosts {
		waitOVNInstalled(t, ctx, h, pods[i])
	}
	for _, a := range pods {
		for _, b := range pods {
			if a == b {
				continue
			}
			// The first packets to a host whose MAC is not resolved yet are dropped: -w, not -c 1.
			if out, err := runInPod(ctx, a, "ping", "-c", "2", "-w", "10", b.ip); err != nil {
				t.Fatalf("ping %s -> %s (%s): %v\n%s", a.name, b.name, b.ip, err, out)
			}
		}
	}
	for _, h := range c.Hosts {
		out := run(t, ctx, h, "ovs-vsctl", "--db="+h.OVSEndpoint, "--columns=name", "find", "Interface", "type=geneve")
		if n := strings.Count(out, "name"); n != len(c.Hosts)-1 {
			t.Errorf("host %s has %d geneve tunnels, want %d:\n%s", h.NodeIP, n, len(c.Hosts)-1, out)
		}
	}
	assertClusterTeardown(t, c, 5+3*len(c.Hosts))
}

// assertClusterTeardown closes the cluster and checks that every member's processes,
// namespaces and directories are gone, and the underlay with them; the cluster must have
// started want processes.
func assertClusterTeardown(t *testing.T, c *Cluster, want int) {
	t.Helper()
	members := append([]*Rig{c.Central}, c.Hosts...)
	var procs []*Process
	for _, m := range members {
		procs = append(procs, m.procs...)
	}
	if len(procs) != want {
		t.Fatalf("cluster started %d processes, want %d", len(procs), want)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close cluster: %v", err)
	}
	for _, p := range procs {
		if err := syscall.Kill(p.PID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Close: kill 0 = %v", p.Name, p.PID, err)
		}
	}
	paths := []string{c.Dir, netnsDir + "/" + c.underlay.netns}
	for _, m := range members {
		paths = append(paths, m.NetnsPath)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Close: %v", p, err)
		}
	}
}
