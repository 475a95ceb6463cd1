package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/images"
)

// kubeMode is one way of running Services: with kube-proxy or without.
type kubeMode struct {
	name      string
	kubeProxy bool
	title     string
}

var allModes = map[string]kubeMode{
	"kube-proxy": {"kube-proxy", true, "with kube-proxy (iptables)"},
	"edgeovn":    {"edgeovn", false, "without kube-proxy (edgeovn)"},
}

func parseModes(s string) ([]kubeMode, error) {
	var out []kubeMode
	for _, name := range strings.Split(s, ",") {
		m, ok := allModes[strings.TrimSpace(name)]
		if !ok {
			return nil, fmt.Errorf("-modes: unknown mode %q (want kube-proxy, edgeovn)", name)
		}
		out = append(out, m)
	}
	return out, nil
}

// modeRun is one mode's results and how long its cluster and its specs took.
type modeRun struct {
	mode    kubeMode
	results []result
	setup   time.Duration
	specs   time.Duration
}

// binaries the command needs in the cache besides what the rig checks.
var cacheBinaries = []string{"e2e.test", "kubectl", "agnhost"}

func preflight(c config) error {
	var missing []string
	for _, b := range cacheBinaries {
		if _, err := os.Stat(filepath.Join(c.cache, b)); err != nil {
			missing = append(missing, b)
		}
	}
	needs := append([]harness.Component{harness.ControllerManager, harness.Scheduler, harness.CoreDNS, harness.KubeProxy}, harness.RealNodeParts...)
	err := harness.Preflight(needs...)
	if len(missing) > 0 {
		err = fmt.Errorf("no %s in %s: build them with e2e/scripts/build-kube.sh %s kube-scheduler kubectl agnhost e2e.test (make conformance-deps); %v",
			strings.Join(missing, ", "), c.cache, c.cache, err)
	}
	return err
}

// buildImages builds the node's images (pause, testserver) and the upstream ones.
func buildImages(ctx context.Context, c config) ([]string, error) {
	dir := filepath.Join(c.out, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	own, err := images.Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	src, err := agnhostSource(ctx)
	if err != nil {
		return nil, err
	}
	up, err := images.BuildUpstream(ctx, images.UpstreamRequest{Dir: dir, Agnhost: filepath.Join(c.cache, "agnhost"), AgnhostSource: src,
		CoreDNS: filepath.Join(c.cache, "coredns")})
	if err != nil {
		return nil, err
	}
	return append(own, up...), nil
}

// runMode brings a cluster up in the mode, runs the specs against it and tears it down.
func runMode(ctx context.Context, c config, m kubeMode, tars []string, log *slog.Logger) (modeRun, error) {
	r := modeRun{mode: m}
	fmt.Fprintf(os.Stderr, "conformance: %s: starting the cluster\n", m.title)
	t0 := time.Now()
	cl, err := startCluster(ctx, clusterRequest{bin: c.bin, images: tars, kubeProxy: m.kubeProxy, stack: c.stack, keep: c.keep, log: log})
	if err != nil {
		return r, err
	}
	r.setup = time.Since(t0)
	reportDir := filepath.Join(c.out, m.name)
	fmt.Fprintf(os.Stderr, "conformance: %s: cluster up in %s; running e2e.test (log %s)\n", m.title, r.setup.Round(time.Second), filepath.Join(reportDir, "e2e.log"))
	t1 := time.Now()
	err = runE2E(ctx, e2eRequest{binary: filepath.Join(c.cache, "e2e.test"), kubectl: filepath.Join(c.cache, "kubectl"), netns: cl.rig.Netns,
		focus: narrowed(c.stack, c.focus), skip: joinSkip(skip(c.numNodes), c.skip), reportDir: reportDir, numNodes: c.numNodes}, cl.rig.Kubeconfig)
	r.specs = time.Since(t1)
	if cerr := cl.close(); cerr != nil {
		fmt.Fprintf(os.Stderr, "conformance: %s: teardown: %v\n", m.title, cerr)
	}
	if err != nil {
		return r, err
	}
	r.results, err = readReport(reportDir, c.stack)
	return r, err
}

// narrowed is the focus e2e.test gets: the selected specs, or the -focus expression that
// narrows them while developing (Go's regular expressions cannot intersect two; the table
// shows only the selected specs whatever runs).
func narrowed(s stack, extra string) string {
	if extra == "" {
		return focus(s)
	}
	return extra
}

func joinSkip(a, b string) string {
	if b == "" {
		return a
	}
	return a + "|" + b
}

// dryRun lists the specs the focus and skips select, without a cluster.
func dryRun(ctx context.Context, c config) error {
	dir := filepath.Join(c.out, "dry-run")
	err := runE2E(ctx, e2eRequest{binary: filepath.Join(c.cache, "e2e.test"), kubectl: filepath.Join(c.cache, "kubectl"), netns: "",
		focus: narrowed(c.stack, c.focus), skip: joinSkip(skip(c.numNodes), c.skip), reportDir: dir, dryRun: true, numNodes: c.numNodes}, "/dev/null")
	if err != nil {
		return err
	}
	res, err := readReport(dir, c.stack)
	if err != nil {
		return err
	}
	for i := range res {
		if res[i].Outcome == "pass" { // a dry run passes every spec it would run
			res[i].Outcome = "run"
		}
	}
	printTable(os.Stdout, []modeRun{{mode: kubeMode{name: "dry-run", title: "dry run"}, results: res}})
	return nil
}

// kubernetesModule is the module e2e.test and agnhost are built from (build-kube.sh).
const kubernetesModule = "k8s.io/kubernetes@v1.34.4"

// agnhostSource is agnhost's source directory in the module cache (build-kube.sh put it there).
func agnhostSource(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", kubernetesModule).Output()
	if err != nil {
		return "", fmt.Errorf("locate %s in the module cache: %w", kubernetesModule, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("locate %s in the module cache: no directory in %q", kubernetesModule, out)
	}
	return filepath.Join(m.Dir, "test", "images", "agnhost"), nil
}
