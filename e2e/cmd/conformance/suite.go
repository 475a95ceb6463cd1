package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The upstream specs make conformance runs: the sig-network Conformance tests, the
// NetworkPolicy tests, and the Services tests of external IPs and traffic policies that need
// no cloud provider (kube-proxy's replacement for bare-metal sites: issue 31). Of those, the
// ones that need two or three nodes are skipped by the framework on this one-node cluster,
// with its reason in the table. The [Feature:LoadBalancer] specs are not selected: each needs
// a cloud provider's load balancer (the framework skips them for provider "local").
const (
	conformanceFocus = `\[sig-network\].*\[Conformance\]`
	netpolFocus      = `\[sig-network\] (Netpol|NetworkPolicy)`
	// dualStackFocus is the dual-stack specs, selected on a dual-stack cluster (-stack dual).
	dualStackFocus = `\[sig-network\] \[Feature:IPv6DualStack\]`
	trafficFocus   = `\[sig-network\] Services should (be possible to connect to a service via ExternalIP|` +
		`respect internalTrafficPolicy|support externalTrafficPolicy=Local|fallback to (local )?terminating endpoints|` +
		`serve endpoints on same port and different protocol for internal traffic on Type LoadBalancer|` +
		`implement NodePort and HealthCheckNodePort correctly)`
)

// skipRule is a spec make conformance does not run, and why.
type skipRule struct {
	pattern string
	reason  string
	// nodes is the node count e2e.test must be told (-num-nodes) to run the specs anyway: 0
	// means never.
	nodes int
}

// skipRules: what needs several nodes or a feature edgeovn does not claim. Each reason
// goes into the table next to the specs it skipped.
var skipRules = []skipRule{
	{`\[Disruptive\]`, "restarts or breaks cluster components the rig owns", 0},
	{`\[Feature:SCTPConnectivity\]`, "SCTP traffic: this machine kind's kernel has no SCTP (socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP): protocol not supported)", 0},
	// The framework counts nodes from --num-nodes (default: the ready ones): told two, it runs
	// these checks on the one node, one endpoint pod, every dial to that node (-num-nodes 2).
	{`\[Feature:IPv6DualStack\] Granular Checks: Services Secondary IP Family`, "needs two nodes: the framework's NetworkingTestConfig.setup skips it on one (SkipUnlessNodeCountIsAtLeast(2)), after creating its pods; -num-nodes 2 runs it on one", 2},
}

// focus is the regular expression e2e.test selects specs with on a cluster of the stack: on
// a dual-stack one, the [Feature:IPv6DualStack] specs too.
func focus(s stack) string {
	f := conformanceFocus + "|" + netpolFocus + "|" + trafficFocus
	if s.dual() {
		f += "|" + dualStackFocus
	}
	return f
}

// skip is the regular expression of the specs skipRules leaves out when e2e.test is told
// the cluster has numNodes nodes (0: it counts them).
func skip(numNodes int) string {
	var p []string
	for _, r := range skipRules {
		if r.nodes > 0 && numNodes >= r.nodes {
			continue
		}
		p = append(p, r.pattern)
	}
	return strings.Join(p, "|")
}

// skipReason is the rule's reason for a spec it leaves out, or "".
func skipReason(name string) string {
	for _, r := range skipRules {
		if regexp.MustCompile(r.pattern).MatchString(name) {
			return r.reason
		}
	}
	return ""
}

// selected reports whether a spec name is one of make conformance's on the stack.
func selected(s stack, name string) bool {
	return regexp.MustCompile(focus(s)).MatchString(name)
}

// e2eRequest is one run of the upstream e2e binary against a cluster.
type e2eRequest struct {
	binary    string // e2e.test
	kubectl   string
	netns     string // the rig's network namespace: the runner sits on the node
	focus     string
	skip      string
	reportDir string
	dryRun    bool
	numNodes  int // --num-nodes; 0 leaves e2e.test's default (count the ready nodes)
}

// runE2E runs e2e.test inside the rig's network namespace (as a process on the node: it
// reaches the API server, node ports and pods as the host does) with its output in
// reportDir/e2e.log; the JUnit report lands in reportDir too. A run whose specs fail still
// returns nil: the report says which.
func runE2E(ctx context.Context, req e2eRequest, kubeconfig string) error {
	if err := os.MkdirAll(req.reportDir, 0o755); err != nil {
		return fmt.Errorf("e2e report dir: %w", err)
	}
	logPath := filepath.Join(req.reportDir, "e2e.log")
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("e2e log: %w", err)
	}
	defer log.Close()
	args := []string{"--kubeconfig=" + kubeconfig,
		"--kubectl-path=" + req.kubectl,
		"--report-dir=" + req.reportDir,
		"--ginkgo.focus=" + req.focus,
		"--ginkgo.skip=" + req.skip,
		"--ginkgo.no-color",
		"--ginkgo.v",
		"--ginkgo.timeout=4h",
		"--ginkgo.poll-progress-after=2m",
		"--minStartupPods=0",
		"--disable-log-dump",
	}
	if req.numNodes > 0 {
		args = append(args, "--num-nodes="+strconv.Itoa(req.numNodes))
	}
	if req.dryRun {
		args = append(args, "--ginkgo.dry-run")
	}
	cmd := exec.CommandContext(ctx, req.binary, args...)
	if req.netns != "" {
		cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", req.netns, req.binary}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); ok && ctx.Err() == nil {
			return nil // failed specs: the report has them
		}
		return fmt.Errorf("run e2e.test (log %s): %w", logPath, err)
	}
	return nil
}
