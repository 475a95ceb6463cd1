package sqlitestore_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

const crashChildEnv = "EDGEOVN_IPAM_CRASH_CHILD"

var crashSubnet = ipam.Subnet{Name: "crash", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/22")},
	Gateways: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}

// TestCrashKeepsAcknowledged kills a process that allocates and releases as fast as it can,
// at random moments, 20 times; after each kill every acknowledged allocation must be in the
// database with its address, every acknowledged release gone (owners are never reused, so a
// released owner that comes back is a lost release), and no address held twice.
func TestCrashKeepsAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	path := filepath.Join(t.TempDir(), "ipam.db")
	held := map[ipam.Owner]netip.Addr{} // what the children acknowledged, as of the last kill
	released := map[ipam.Owner]bool{}   // releases the children acknowledged
	for round := 0; round < 20; round++ {
		runCrashChild(t, path, round, rand.IntN(400)+20, acks{held: held, released: released})
		st, m := open(t, path)
		got := map[ipam.Owner]netip.Addr{}
		seen := map[netip.Addr]ipam.Owner{}
		for _, a := range m.Allocations() {
			got[a.Owner] = a.IPs[0]
			if o, dup := seen[a.IPs[0]]; dup {
				t.Fatalf("round %d: %s held by %s and %s", round, a.IPs[0], o, a.Owner)
			}
			seen[a.IPs[0]] = a.Owner
		}
		for o, ip := range held {
			if got[o] != ip {
				t.Fatalf("round %d: acknowledged allocation %s -> %s is %v after the kill", round, o, ip, got[o])
			}
		}
		for o, ip := range got { // an unacknowledged allocation, or release, may have landed: adopt it
			if released[o] {
				t.Fatalf("round %d: acknowledged release of %s (%s) lost: it is back after the kill", round, o, ip)
			}
			if h, ok := held[o]; ok && h != ip {
				t.Fatalf("round %d: %s moved from %s to %s", round, o, h, ip)
			}
			held[o] = ip
		}
		must(t, st.Close())
	}
}

// acks are what the children acknowledged: allocations held, releases done.
type acks struct {
	held     map[ipam.Owner]netip.Addr
	released map[ipam.Owner]bool
}

// runCrashChild starts the child, reads its acknowledgements, and kills it (by PID) after
// kill of them. It updates acks with what was acknowledged.
func runCrashChild(t *testing.T, path string, round, kill int, acked acks) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, fmt.Sprintf("EDGEOVN_IPAM_CRASH_ROUND=%d", round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	for n := 0; sc.Scan(); n++ { // after the kill, drain what was acknowledged before it
		if n == kill {
			must(t, cmd.Process.Kill())
		}
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch o := (ipam.Owner{Pod: f[1], Interface: "eth0"}); f[0] {
		case "A":
			acked.held[o] = netip.MustParseAddr(f[2])
		case "r": // a release is starting: from now on the owner may or may not be there
			delete(acked.held, o)
		case "R": // the release returned: the owner must never be seen again
			acked.released[o] = true
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
}

// TestCrashChild is the child side of TestCrashKeepsAcknowledged; it does nothing unless
// started by it.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("only run as the child of TestCrashKeepsAcknowledged")
	}
	ctx := context.Background()
	st, m := open(t, path)
	defer st.Close()
	must(t, m.EnsureSubnet(ctx, crashSubnet))
	round := os.Getenv("EDGEOVN_IPAM_CRASH_ROUND")
	live := []ipam.Owner{}
	for _, a := range m.Allocations() {
		live = append(live, a.Owner)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; i < 10000; i++ {
		if len(live) > 300 || (len(live) > 0 && rand.IntN(3) == 0) {
			j := rand.IntN(len(live))
			o := live[j]
			live = append(live[:j], live[j+1:]...)
			fmt.Fprintf(w, "r %s\n", o.Pod)
			w.Flush()
			must(t, m.Release(ctx, o))
			fmt.Fprintf(w, "R %s\n", o.Pod)
		} else {
			o := ipam.Owner{Pod: fmt.Sprintf("r%s/p%d", round, i), Interface: "eth0"}
			a, err := m.Allocate(ctx, ipam.Request{Subnet: crashSubnet.Name, Owner: o})
			must(t, err)
			live = append(live, o)
			fmt.Fprintf(w, "A %s %s\n", o.Pod, a.IPs[0])
		}
		w.Flush() // acknowledge only after the call returned
	}
}
