package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// timeline is where one reboot's time went, for -steps.
type timeline struct {
	boot         harness.BootTimes
	edgeovn      *harness.Process // the booted edgeovn (its log holds the ADD steps)
	edgeovnStart time.Time
	edgeovnReady time.Time // CNI STATUS said ready
	burst        time.Time // every sandbox re-created from here
	apiReadyz    time.Time // kube-apiserver's /readyz first passed (after the burst began)
	pods         []podRun
	bootCPU      cpuUse                     // from the daemons' start to the burst
	cpu          cpuUse                     // from the burst to the last pod reaching its neighbour
	steps        map[string][]time.Duration // readSteps of the booted edgeovn's log
}

// addSteps are the steps cni/server's ADD logs ("cni add step", at debug), in order.
var addSteps = []string{"check datapath", "wait for allocation", "set up veth", "add ovs port", "serve host ports", "apply qos", "wait for ovn-installed"}

// print writes the timeline from OVS up, the per-pod phases and the ADD steps as p50, p99
// and max, and the CPU used during the burst.
func (t timeline) print() {
	at := func(tm time.Time) string {
		if tm.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%+.2f s", tm.Sub(t.boot.OVSUp).Seconds())
	}
	fmt.Println("  timeline, from OVS up:")
	for _, m := range []struct {
		what string
		at   time.Time
	}{
		{"ovn-controller answered", t.boot.Up["ovn-controller"]},
		{"edgeovn started", t.edgeovnStart},
		{"etcd answered", t.boot.Up["etcd"]},
		{"kube-apiserver answered a pod list", t.boot.Up["kube-apiserver"]},
		{"kube-apiserver ready (/readyz)", t.apiReadyz},
		{"edgeovn ready (CNI STATUS)", t.edgeovnReady},
		{"sandboxes re-created (burst)", t.burst},
		{"first ADD answered", t.first(func(p podRun) time.Time { return p.added })},
		{"last ADD answered", t.last(func(p podRun) time.Time { return p.added })},
		{"last pod reached its gateway", t.last(func(p podRun) time.Time { return p.gateway })},
		{"last pod reached its neighbour", t.last(func(p podRun) time.Time { return p.neighbour })},
	} {
		fmt.Printf("    %-34s %9s\n", m.what, at(m.at))
	}
	if end := t.last(func(p podRun) time.Time { return p.neighbour }); !end.IsZero() {
		fmt.Printf("    %-34s %9s\n", "burst -> last neighbour reached", fmt.Sprintf("%.2f s", end.Sub(t.burst).Seconds()))
	}
	steps := t.steps
	fmt.Printf("  per pod (%3d): %21s %9s %9s\n", len(t.pods), "p50", "p99", "max")
	row := func(what string, d []time.Duration) {
		fmt.Printf("    %-34s %9s %9s %9s\n", what, ms(benchkit.Pct(d, 50)), ms(benchkit.Pct(d, 99)), ms(slices.Max(append(d, 0))))
	}
	row("burst -> ADD answered", t.span(func(p podRun) time.Time { return t.burst }, func(p podRun) time.Time { return p.added }))
	row("burst -> eth0 ADD sent (netns, lo)", t.span(func(p podRun) time.Time { return t.burst }, func(p podRun) time.Time { return p.added.Add(-p.took) }))
	row("ADD (libcni, eth0)", t.durations(func(p podRun) time.Duration { return p.took }))
	// Since the port is added beside the pod end's configuration, "set up veth" holds "add
	// ovs port"; steps an ADD did not take (host ports) are left out.
	for _, s := range append(slices.Clone(addSteps), "pod network added") {
		if len(steps[s]) > 0 {
			row("  edgeovn: "+s, steps[s])
		}
	}
	row("ADD answered -> gateway", t.span(func(p podRun) time.Time { return p.added }, func(p podRun) time.Time { return p.gateway }))
	row("gateway -> neighbour", t.span(func(p podRun) time.Time { return p.gateway }, func(p podRun) time.Time { return p.neighbour }))
	t.bootCPU.print("the daemons' start to the burst")
	t.cpu.print("the burst to the last neighbour reached")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func (t timeline) first(f func(podRun) time.Time) time.Time {
	var out time.Time
	for _, p := range t.pods {
		if v := f(p); !v.IsZero() && (out.IsZero() || v.Before(out)) {
			out = v
		}
	}
	return out
}

func (t timeline) last(f func(podRun) time.Time) time.Time {
	var out time.Time
	for _, p := range t.pods {
		if v := f(p); v.After(out) {
			out = v
		}
	}
	return out
}

// span is to(p) - from(p) for each pod that has both.
func (t timeline) span(from, to func(podRun) time.Time) []time.Duration {
	var out []time.Duration
	for _, p := range t.pods {
		if a, b := from(p), to(p); !a.IsZero() && !b.IsZero() {
			out = append(out, b.Sub(a))
		}
	}
	return out
}

func (t timeline) durations(f func(podRun) time.Duration) []time.Duration {
	var out []time.Duration
	for _, p := range t.pods {
		out = append(out, f(p))
	}
	return out
}

// readSteps reads the ADD steps' durations from an edgeovn log at debug level ("cni add step"
// with step= and duration=) and each ADD's total ("pod network added" with duration=).
func readSteps(logPath string) (map[string][]time.Duration, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, fmt.Errorf("read ADD steps: %w", err)
	}
	defer f.Close()
	out := make(map[string][]time.Duration)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		step := ""
		switch {
		case strings.Contains(line, `msg="cni add step"`):
			step = field(line, "step")
		case strings.Contains(line, `msg="pod network added"`):
			step = "pod network added"
		default:
			continue
		}
		if d, err := time.ParseDuration(field(line, "duration")); err == nil && step != "" {
			out[step] = append(out[step], d)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read ADD steps from %s: %w", logPath, err)
	}
	return out, nil
}

// field is the value of key in one slog text line (quoted or not), "" when absent.
func field(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		v, _, _ = strings.Cut(v[1:], `"`)
		return v
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

// cpuUse is the CPU the machine and each rig process used over a window.
type cpuUse struct {
	wall        time.Duration
	busy, total uint64 // jiffies of all CPUs, from /proc/stat
	procs       map[string]time.Duration
	// self is the bench's own CPU (the runtime's stand-in: namespaces, libcni, probes) and
	// children that of the processes it started and reaped (CNI plugins, ip, ping).
	self, children time.Duration
}

// sampleCPU reads the machine's and each process's CPU time now.
func sampleCPU(procs []*harness.Process) cpuUse {
	c := cpuUse{wall: time.Duration(time.Now().UnixNano()), procs: make(map[string]time.Duration)}
	c.busy, c.total = machineJiffies()
	c.self, c.children = rusage(unix.RUSAGE_SELF), rusage(unix.RUSAGE_CHILDREN)
	for _, p := range procs {
		if d, err := benchkit.CPUTime(p.PID); err == nil {
			c.procs[p.Name] = d
		}
	}
	return c
}

// since is the use from c to now.
func (c cpuUse) since(procs []*harness.Process) cpuUse {
	now := sampleCPU(procs)
	out := cpuUse{wall: now.wall - c.wall, busy: now.busy - c.busy, total: now.total - c.total, procs: make(map[string]time.Duration),
		self: now.self - c.self, children: now.children - c.children}
	for name, d := range now.procs {
		if d0, ok := c.procs[name]; ok {
			out.procs[name] = d - d0
		}
	}
	return out
}

// bootUse is the use from before (sampled before the reboot, its processes since gone) to at:
// every process of at was started by the boot, so its whole CPU time is the window's.
func bootUse(before, at cpuUse) cpuUse {
	return cpuUse{wall: at.wall - before.wall, busy: at.busy - before.busy, total: at.total - before.total, procs: at.procs,
		self: at.self - before.self, children: -1} // the killed daemons were reaped in this window
}

func (c cpuUse) print(window string) {
	if c.total == 0 {
		return
	}
	fmt.Printf("  CPU from %s (%.2f s): machine %.0f%% busy (all cores)\n",
		window, c.wall.Seconds(), 100*float64(c.busy)/float64(c.total))
	names := make([]string, 0, len(c.procs))
	for n := range c.procs {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(c.procs[b] - c.procs[a]) })
	var parts []string
	for _, n := range names {
		if c.procs[n] >= 10*time.Millisecond {
			parts = append(parts, fmt.Sprintf("%s %.2f s", n, c.procs[n].Seconds()))
		}
	}
	fmt.Println("    CPU time:", strings.Join(parts, ", "))
	if c.children < 0 {
		fmt.Printf("    the bench (the runtime's stand-in) %.2f s\n", c.self.Seconds())
		return
	}
	fmt.Printf("    the bench (the runtime's stand-in) %.2f s, the processes it ran and reaped (CNI plugins, ip, ping) %.2f s\n",
		c.self.Seconds(), c.children.Seconds())
}

// rusage is the user and system CPU time getrusage(2) reports for who.
func rusage(who int) time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineJiffies is the busy and total jiffies of every CPU from /proc/stat's first line.
func machineJiffies() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		var v uint64
		fmt.Sscan(f, &v)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
