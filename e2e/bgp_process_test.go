package e2e

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// speakerProcesses are the PIDs of the live edgeovn-bgp processes whose parent is parent
// (a zombie is not live).
func speakerProcesses(t *testing.T, parent int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fs := strings.Fields(s[closing+1:])
		if s[open+1:closing] != "edgeovn-bgp" || len(fs) < 2 || fs[0] == "Z" || fs[0] == "X" {
			continue
		}
		if ppid, _ := strconv.Atoi(fs[1]); ppid == parent {
			pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
			out = append(out, pid)
		}
	}
	return out
}

// alive says whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fs) > 0 && fs[0] != "Z" && fs[0] != "X"
}

// TestBGPSpeakerProcess: the BGP speaker is the process edgeovn-bgp, a child of edgeovn
// started only with a neighbour configured: killed by its PID, it is started again and the
// routes come back; edgeovn killed, it goes too (Pdeathsig); edgeovn started again without a
// neighbour starts none.
func TestBGPSpeakerProcess(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 1})
	w.established(ctx, t, 0)
	e := w.cl.hosts[0]
	sn := netip.MustParsePrefix("10.66.0.0/24")
	w.subnet(ctx, t, "bgp-proc", sn.String(), "true")
	w.waitHops(ctx, t, sn, w.hosts[0])

	var first []int
	eventually(ctx, t, "one edgeovn-bgp child of edgeovn", func() bool {
		first = speakerProcesses(t, e.daemon.PID)
		return len(first) == 1
	})
	if err := syscall.Kill(first[0], syscall.SIGKILL); err != nil {
		t.Fatalf("kill edgeovn-bgp %d: %v", first[0], err)
	}
	var second []int
	eventually(ctx, t, "edgeovn-bgp started again after it was killed", func() bool {
		second = speakerProcesses(t, e.daemon.PID)
		return len(second) == 1 && second[0] != first[0]
	})
	t.Logf("edgeovn-bgp %d killed, %d started in its place", first[0], second[0])
	w.established(ctx, t, 0)
	w.waitHops(ctx, t, sn, w.hosts[0])
	eventually(ctx, t, "status: the peer established again", func() bool {
		return strings.Contains(w.bgpStatus(ctx, t, 0), "established")
	})

	// edgeovn crashes: its speaker goes with it.
	if err := e.daemon.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(second[0]) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(second[0]) {
		t.Errorf("edgeovn-bgp %d outlived edgeovn", second[0])
		_ = syscall.Kill(second[0], syscall.SIGKILL)
	}

	// Without a neighbour: no speaker process.
	var err error
	e.daemon, err = daemon.Start(ctx, e.rig, daemon.Spec{Node: w.cl.names[0], BinDir: w.cl.bins, Extra: daemonFlags})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	select {
	case <-ctx.Done():
	case <-time.After(3 * time.Second):
	}
	if got := speakerProcesses(t, e.daemon.PID); len(got) != 0 {
		t.Errorf("edgeovn without a neighbour started edgeovn-bgp %v", got)
	}
	out, _ := e.rig.Run(ctx, e.bin, "status", "--config=/dev/null", "--node-name="+w.cl.names[0], "--kubeconfig="+e.rig.Kubeconfig,
		"--ovn-nb="+e.rig.NBEndpoint, "--ovn-sb="+e.rig.SBEndpoint, "--ovs-db="+e.rig.OVSEndpoint, "--ipam-db="+e.ipamDB)
	if strings.Contains(string(out), "\nbgp:") {
		t.Errorf("edgeovn without a neighbour: status has a bgp section:\n%s", out)
	}
}
