package podqos

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testNetns makes a network namespace with a veth pair qa/qb in it (qa up) and returns its
// path.
func testNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes a network namespace")
	}
	name := "podqos-" + strings.ReplaceAll(t.Name(), "/", "-")
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
	ip("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ip("-n", name, "link", "add", "qa", "type", "veth", "peer", "name", "qb")
	ip("-n", name, "link", "set", "qa", "up")
	return "/run/netns/" + name
}

func qdiscs(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", strings.TrimPrefix(path, "/run/netns/"), "tc", "qdisc", "show", "dev", "qa").CombinedOutput()
	if err != nil {
		t.Fatalf("tc qdisc show: %v\n%s", err, out)
	}
	return string(out)
}

func TestApplyShape(t *testing.T) {
	path := testNetns(t)
	d := device{Netns: path, Name: "qa"}
	ten := shape{Rate: Rate{BitsPerSec: 10e6, BurstBytes: defaultBurst(10e6)}}
	steps := []struct {
		name        string
		s           shape
		wantChanged bool
		want        string // in tc's listing
	}{
		{"shape", ten, true, "tbf e0e0: root refcnt 3 rate 10Mbit burst 25000b"},
		{"same again", ten, false, "rate 10Mbit"},
		{"change", shape{Rate: Rate{BitsPerSec: 30e6, BurstBytes: defaultBurst(30e6)}}, true, "rate 30Mbit"},
		{"remove", shape{}, true, "noqueue"},
		{"remove again", shape{}, false, "noqueue"},
	}
	for _, st := range steps {
		changed, err := applyShape(d, st.s)
		if err != nil || changed != st.wantChanged {
			t.Fatalf("%s: changed %v, err %v; want changed %v", st.name, changed, err, st.wantChanged)
		}
		if got := qdiscs(t, path); !strings.Contains(got, st.want) {
			t.Fatalf("%s: qdiscs %q, want %q", st.name, got, st.want)
		}
	}
	// A root qdisc that is not edgeovn's is left alone when there is nothing to apply.
	if out, err := exec.Command("ip", "netns", "exec", strings.TrimPrefix(path, "/run/netns/"), "tc", "qdisc", "add", "dev", "qa",
		"root", "handle", "7:", "tbf", "rate", "1mbit", "burst", "32kb", "latency", "50ms").CombinedOutput(); err != nil {
		t.Fatalf("add a foreign qdisc: %v\n%s", err, out)
	}
	if changed, err := applyShape(d, shape{}); err != nil || changed {
		t.Fatalf("zero shape over a foreign qdisc: changed %v, err %v", changed, err)
	}
	if got := qdiscs(t, path); !strings.Contains(got, "tbf 7: root") {
		t.Fatalf("foreign qdisc changed: %q", got)
	}
}

// TestApplyShapeNetem: netem where the kernel has it, ErrNoNetem where it does not (this
// machine kind), found by asking the kernel.
func TestApplyShapeNetem(t *testing.T) {
	path := testNetns(t)
	d := device{Netns: path, Name: "qa"}
	s := shape{Rate: Rate{BitsPerSec: 10e6, BurstBytes: defaultBurst(10e6)}, Netem: Netem{Latency: 20 * time.Millisecond}}
	_, err := applyShape(d, s)
	if errors.Is(err, ErrNoNetem) {
		t.Logf("no netem in this kernel: %v", err)
		if _, err := applyShape(d, shape{Rate: s.Rate}); err != nil {
			t.Fatal(err)
		}
		if got := qdiscs(t, path); !strings.Contains(got, "tbf e0e0: root") {
			t.Fatalf("after the netem refusal the rate is not applied: %q", got)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := qdiscs(t, path); !strings.Contains(got, "netem e0e0: root") || !strings.Contains(got, "tbf e0e1:") {
		t.Fatalf("qdiscs %q, want netem with a tbf under it", got)
	}
}
