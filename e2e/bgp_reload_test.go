package e2e

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestBGPReload: edgeovn started from a config file without a neighbour runs no speaker; the
// file given a neighbour and edgeovn a SIGHUP (systemctl reload), the same edgeovn process
// starts edgeovn-bgp and the annotated Subnet reaches the router; a bad value reloaded is
// refused and changes nothing; a changed option restarts the speaker process; the neighbour
// removed, the speaker goes and the route is withdrawn, edgeovn running throughout.
func TestBGPReload(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 1})
	w.established(ctx, t, 0)
	e := w.cl.hosts[0]
	sn := netip.MustParsePrefix("10.67.0.0/24")
	w.subnet(ctx, t, "bgp-reload", sn.String(), "true")
	w.waitHops(ctx, t, sn, w.hosts[0])

	// Started again from a file with everything but a neighbour (and no neighbour flag).
	conf := filepath.Join(t.TempDir(), "config.yaml")
	base := fmt.Sprintf("neighbor-as: %d\ncluster-as: %d\n", bgpRouterAS, bgpClusterAS)
	writeConf := func(s string) {
		t.Helper()
		if err := os.WriteFile(conf, []byte(base+s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConf("holdtime: 9s\n")
	if err := e.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	var err error
	e.daemon, err = daemon.Start(ctx, e.rig, daemon.Spec{Node: w.cl.names[0], BinDir: w.cl.bins, Extra: append(append([]string{}, daemonFlags...), "--config="+conf)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	pid := e.daemon.PID
	w.waitHops(ctx, t, sn)
	if got := speakerProcesses(t, pid); len(got) != 0 {
		t.Fatalf("no neighbour in the file, yet edgeovn-bgp %v runs", got)
	}
	hup := func(file string) {
		t.Helper()
		writeConf(file)
		if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
			t.Fatalf("SIGHUP edgeovn %d: %v", pid, err)
		}
	}

	hup("holdtime: 9s\nneighbor-address: " + siteLAN.Addr().String() + "\n")
	var first []int
	eventually(ctx, t, "edgeovn-bgp started by the reload", func() bool {
		first = speakerProcesses(t, pid)
		return len(first) == 1
	})
	w.established(ctx, t, 0)
	took := w.waitHops(ctx, t, sn, w.hosts[0])
	t.Logf("neighbour added by a reload: %s in the router's RIB %v after the speaker started", sn, took)

	hup("holdtime: 1s\nneighbor-address: " + siteLAN.Addr().String() + "\n")
	eventually(ctx, t, "the bad reload refused in the log", func() bool {
		return strings.Contains(e.daemonLog(), "config reload refused") && strings.Contains(e.daemonLog(), "holdtime 1s")
	})
	time.Sleep(2 * time.Second)
	if got := speakerProcesses(t, pid); len(got) != 1 || got[0] != first[0] {
		t.Errorf("a refused reload changed the speaker: %v, was %v", got, first)
	}
	if hops, _ := w.nextHops(ctx, t, sn); len(hops) != 1 {
		t.Errorf("a refused reload withdrew %s", sn)
	}

	hup("holdtime: 12s\nneighbor-address: " + siteLAN.Addr().String() + "\n")
	eventually(ctx, t, "edgeovn-bgp started again with the new hold time", func() bool {
		got := speakerProcesses(t, pid)
		return len(got) == 1 && got[0] != first[0]
	})
	w.established(ctx, t, 0)
	w.waitHops(ctx, t, sn, w.hosts[0])

	hup("holdtime: 12s\n")
	took = w.waitHops(ctx, t, sn)
	t.Logf("neighbour removed by a reload: %s withdrawn after %v", sn, took)
	eventually(ctx, t, "edgeovn-bgp gone", func() bool { return len(speakerProcesses(t, pid)) == 0 })
	if !alive(pid) {
		t.Fatalf("edgeovn %d did not survive the reloads", pid)
	}
	out, _ := e.rig.Run(ctx, e.bin, "status", "--config=/dev/null", "--node-name="+w.cl.names[0], "--kubeconfig="+e.rig.Kubeconfig,
		"--ovn-nb="+e.rig.NBEndpoint, "--ovn-sb="+e.rig.SBEndpoint, "--ovs-db="+e.rig.OVSEndpoint, "--ipam-db="+e.ipamDB)
	if strings.Contains(string(out), "\nbgp:") {
		t.Errorf("the neighbour removed by a reload: status still has a bgp section:\n%s", out)
	}
}
