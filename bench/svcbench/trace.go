package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// phase is one series of ADDs (with the Services, or without) and, with -trace, where their
// time went.
type phase struct {
	name  string
	adds  map[string]time.Duration // pod name to its ADD as the runtime timed it
	steps serverSteps              // what the daemon logged about each ADD
	usage perAdd                   // CPU time and OVN recomputes per ADD
	execs map[string][]time.Duration
}

func (p *phase) addTimes() []time.Duration {
	out := make([]time.Duration, 0, len(p.adds))
	for _, d := range p.adds {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// tracer collects a phase's trace: the rig's usage before and after, the daemon's log.
type tracer struct {
	rig     *harness.Rig
	log     string // the daemon's log file
	kubelet *podsim.Kubelet
	before  usage
}

func (t *tracer) start(ctx context.Context) error {
	var err error
	t.before, err = snapshot(ctx, t.rig)
	return err
}

// finish fills in p's trace once its ADDs are done.
// adds is how many ADDs the phase made, timed or not.
func (t *tracer) finish(ctx context.Context, p *phase, prefix string, adds int) error {
	after, err := snapshot(ctx, t.rig)
	if err != nil {
		return err
	}
	p.usage = after.since(t.before, adds)
	if p.steps, err = readSteps(t.log, prefix); err != nil {
		return err
	}
	p.execs = map[string][]time.Duration{}
	version := execRequest{path: filepath.Join(t.kubelet.BinDir, "edgeovn"), command: "VERSION", netns: t.rig.NetnsPath,
		stdin: []byte(`{"cniVersion":"1.0.0"}`)}
	if p.execs["edgeovn"], err = execTimes(ctx, version, 10); err != nil {
		return err
	}
	portmap, chained, err := t.portmapAdd(ctx)
	if err != nil || !chained {
		return err
	}
	p.execs["portmap"], err = execTimes(ctx, portmap, 10)
	return err
}

// execRequest is one CNI plugin run.
type execRequest struct {
	path, command string
	netns         string // CNI_NETNS: any namespace but the caller's (skel refuses that)
	stdin         []byte
}

// execTimes runs a CNI plugin n times and times each run: the cost of executing it, its
// start-up and its work, which every ADD pays once per plugin in the chain.
func execTimes(ctx context.Context, r execRequest, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		cmd := exec.CommandContext(ctx, r.path)
		cmd.Env = append(os.Environ(), "CNI_COMMAND="+r.command, "CNI_CONTAINERID=svcbench", "CNI_NETNS="+r.netns,
			"CNI_IFNAME=eth0", "CNI_PATH="+filepath.Dir(r.path))
		cmd.Stdin = bytes.NewReader(r.stdin)
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("run %s %s: %w: %s", r.path, r.command, err, b)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// portmapAdd is the chained portmap's ADD for a pod without hostPorts, with the config
// edgeovn wrote, as the runtime runs it after edgeovn's; chained is false when the config
// chains nothing after edgeovn (edgeovn serves hostPort itself since it took portMappings;
// older builds, measured side by side, still chain portmap).
func (t *tracer) portmapAdd(ctx context.Context) (r execRequest, chained bool, err error) {
	list, err := t.kubelet.ConfList(ctx)
	if err != nil || len(list.Plugins) < 2 {
		return execRequest{}, false, err
	}
	var conf map[string]any
	if err := json.Unmarshal(list.Plugins[len(list.Plugins)-1].Bytes, &conf); err != nil {
		return execRequest{}, false, fmt.Errorf("portmap config: %w", err)
	}
	conf["cniVersion"], conf["name"] = list.CNIVersion, list.Name
	conf["prevResult"] = map[string]any{"cniVersion": list.CNIVersion,
		"interfaces": []any{map[string]any{"name": "eth0", "sandbox": t.rig.NetnsPath}},
		"ips":        []any{map[string]any{"address": "10.42.0.250/16", "gateway": "10.42.0.1", "interface": 0}}}
	stdin, err := json.Marshal(conf)
	return execRequest{path: filepath.Join(t.kubelet.BinDir, fmt.Sprint(conf["type"])), command: "ADD", netns: t.rig.NetnsPath, stdin: stdin}, true, err
}

// traceSteps are the daemon's ADD steps in the order it takes them (cni/server/add.go).
var traceSteps = []string{"check datapath", "wait for allocation", "set up veth", "add ovs port", "wait for ovn-installed"}

// printTrace prints where the ADDs' time went in each phase, side by side.
func printTrace(phases []*phase) {
	fmt.Printf("\nWhere a CNI ADD's time goes, p50 / p95 over the timed pods (-trace)\n\n")
	head, rule := "| part of the ADD |", "|---|"
	for _, p := range phases {
		head += " " + p.name + " |"
		rule += "---:|"
	}
	fmt.Println(head)
	fmt.Println(rule)
	row := func(label string, f func(p *phase) []time.Duration) {
		line := "| " + label + " |"
		for _, p := range phases {
			d := f(p)
			line += fmt.Sprintf(" %s / %s |", benchkit.Ms(benchkit.Pct(d, 50)), benchkit.Ms(benchkit.Pct(d, 95)))
		}
		fmt.Println(line)
	}
	row("ADD as the runtime sees it (libcni)", func(p *phase) []time.Duration { return p.addTimes() })
	row("daemon: whole ADD", func(p *phase) []time.Duration { return p.step(stepTotal) })
	for _, s := range traceSteps {
		row("daemon: "+s, func(p *phase) []time.Duration { return p.step(s) })
	}
	row("outside the daemon (plugin execs, socket, libcni)", func(p *phase) []time.Duration { return p.outside() })
	row("edgeovn-cni exec alone (VERSION)", func(p *phase) []time.Duration { return p.execs["edgeovn"] })
	if slices.ContainsFunc(phases, func(p *phase) bool { return p.execs["portmap"] != nil }) {
		row("portmap ADD alone (no hostPort)", func(p *phase) []time.Duration { return p.execs["portmap"] })
	}
	printUsage(phases)
}

func printUsage(phases []*phase) {
	fmt.Printf("\nPer ADD, over each phase (pod create, ADD, the rig's reaction until the next ADD)\n\n")
	head, rule := "| per ADD |", "|---|"
	for _, p := range phases {
		head += " " + p.name + " |"
		rule += "---:|"
	}
	fmt.Println(head)
	fmt.Println(rule)
	line := "| ovn-northd full recomputes |"
	for _, p := range phases {
		line += fmt.Sprintf(" %.1f |", p.usage.northdRecomputes)
	}
	fmt.Println(line)
	line = "| ovn-controller logical flow recomputes |"
	for _, p := range phases {
		line += fmt.Sprintf(" %.1f |", p.usage.controllerRecomps)
	}
	fmt.Println(line)
	for _, name := range append(slices.Clone(traced), pluginsKey) {
		line := "| CPU time: " + name + " |"
		for _, p := range phases {
			line += " " + benchkit.Ms(p.usage.cpu[name]) + " |"
		}
		fmt.Println(line)
	}
}

// step is one daemon step's durations over the phase's pods.
func (p *phase) step(name string) []time.Duration {
	var out []time.Duration
	for pod := range p.adds {
		if d, ok := p.steps[pod][name]; ok {
			out = append(out, d)
		}
	}
	return out
}

// outside is each ADD's time outside the daemon's own: the runtime's total less the
// daemon's.
func (p *phase) outside() []time.Duration {
	var out []time.Duration
	for pod, total := range p.adds {
		if d, ok := p.steps[pod][stepTotal]; ok {
			out = append(out, total-d)
		}
	}
	return out
}

// phaseRequest is one series of timed ADDs; tracer is nil without -trace.
type phaseRequest struct {
	kubelet *podsim.Kubelet
	tracer  *tracer
	name    string
	prefix  string
	pods    int
}

func (b *bench) phase(ctx context.Context, r phaseRequest) (*phase, error) {
	p := &phase{name: r.name}
	if r.tracer != nil {
		if err := r.tracer.start(ctx); err != nil {
			return nil, err
		}
	}
	var err error
	if p.adds, err = b.cniAdds(ctx, r.kubelet, r.prefix, r.pods); err != nil {
		return nil, err
	}
	if r.tracer != nil {
		return p, r.tracer.finish(ctx, p, r.prefix+"-", r.pods)
	}
	return p, nil
}
