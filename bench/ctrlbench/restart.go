package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// quietNB is how long northbound must log no write before the bench takes the system as
// settled.
const quietNB = 2 * time.Second

// restartResult is one restart of edgeovn with the cluster's pods in place.
type restartResult struct {
	stop      time.Duration // SIGTERM to exit
	toNewPod  time.Duration // start to the new pod seen annotated
	toRunning time.Duration // start to the log's "controller role running"
	toLease   time.Duration // start to the log's "acquired controller lease"
	phases    string        // the term's start phases, as "controller role running" logs them
	// writes are edgeovn's northbound write transactions from the SIGTERM until northbound was
	// quiet again after the new pod's allocation, except the new pod's own (those naming its
	// port or its address: the port, its node's address set).
	writes  []harness.Transaction
	ownPod  int // the new pod's own transactions
	northd  int // ovn-northd's (it writes a new port's up column)
	loadavg string
	profile string // where the trace of its start went (-profile), or why not
}

// restartTraceSpan is how long the execution trace of a restart runs, from the start.
const restartTraceSpan = 4 * time.Second

// restart SIGTERMs edgeovn, creates a pod while it is down, starts it again and times the
// start to that pod annotated. Northbound's writes are counted from its database file, where
// ovsdb-server appends every committed write transaction before it answers: it cannot miss
// one. The file is compacted just before, so that no automatic compaction (at most one
// every 10 minutes) rewrites it during the count; a shrinking file is reported as an error.
func (b *bench) restart(ctx context.Context) (restartResult, error) {
	var r restartResult
	if err := b.settleNB(ctx); err != nil {
		return r, err
	}
	if _, err := b.rig.Run(ctx, "ovs-appctl", "-t", filepath.Join(b.rig.Dir, "ovsdb-nb.ctl"), "ovsdb-server/compact"); err != nil {
		return r, fmt.Errorf("compact northbound before the count: %w", err)
	}
	before, err := b.rig.Transactions(harness.NBDatabase)
	if err != nil {
		return r, err
	}
	t := time.Now()
	if err := b.proc.Stop(); err != nil {
		return r, err
	}
	r.stop = time.Since(t)
	name := fmt.Sprintf("p-%04d", b.number)
	b.number++
	if _, err := b.cl.Kube.CoreV1().Pods(namespace).Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
		return r, fmt.Errorf("create pod %s while edgeovn is down: %w", name, err)
	}
	logAt := logSize(b.proc.Log)
	start := time.Now()
	if b.proc, err = daemon.Start(ctx, b.rig, b.spec); err != nil {
		return r, err
	}
	traced := b.prof.startTrace(ctx, "restart", restartTraceSpan)
	if err := until(ctx, "the new pod annotated", func() bool { _, ok := b.seen.at(name); return ok }); err != nil {
		return r, err
	}
	at, _ := b.seen.at(name)
	r.toNewPod = at.Sub(start)
	if err := until(ctx, "controller role running", func() bool { return logHasAfter(b.proc.Log, logAt, "controller role running") }); err != nil {
		return r, err
	}
	r.toRunning = logTimeAfter(b.proc.Log, logAt, "controller role running").Sub(start)
	r.toLease = logTimeAfter(b.proc.Log, logAt, "acquired controller lease").Sub(start)
	r.phases = logPhasesAfter(b.proc.Log, logAt, "controller role running")
	r.loadavg = benchkit.LoadAvg()
	r.profile = traced()
	return r, b.countWrites(ctx, before, name, &r)
}

// countWrites waits for northbound to settle and sorts its writes since before into the new
// pod's own and the others.
func (b *bench) countWrites(ctx context.Context, before []harness.Transaction, name string, r *restartResult) error {
	if err := b.settleNB(ctx); err != nil {
		return err
	}
	after, err := b.rig.Transactions(harness.NBDatabase)
	if err != nil {
		return err
	}
	if len(after) < len(before) {
		return fmt.Errorf("northbound was compacted during the count (%d -> %d records)", len(before), len(after))
	}
	own, err := b.ownMarks(ctx, name)
	if err != nil {
		return err
	}
	for _, t := range after[len(before):] {
		switch {
		case t.Comment == "ovn-northd":
			r.northd++
		case slices.ContainsFunc(own, func(m string) bool { return strings.Contains(t.Raw, m) }):
			r.ownPod++
		default:
			r.writes = append(r.writes, t)
		}
	}
	return nil
}

// ownMarks are the strings that mark a northbound record as the new pod's: its port name and
// its addresses, quoted as the database file writes them.
func (b *bench) ownMarks(ctx context.Context, name string) ([]string, error) {
	p, err := b.cl.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the new pod %s: %w", name, err)
	}
	n, err := annotation.Decode(p.Annotations)
	if err != nil {
		return nil, fmt.Errorf("the new pod %s: %w", name, err)
	}
	marks := []string{`"` + annotation.PortName(namespace, name) + `"`}
	for _, ip := range n.IPs {
		marks = append(marks, `"`+ip.String()+`"`)
	}
	return marks, nil
}

// settleNB waits until northbound has logged no write for quietNB.
func (b *bench) settleNB(ctx context.Context) error {
	last, since := -1, time.Now()
	var err error
	werr := until(ctx, "northbound quiet", func() bool {
		var ts []harness.Transaction
		if ts, err = b.rig.Transactions(harness.NBDatabase); err != nil {
			return true
		}
		if len(ts) != last {
			last, since = len(ts), time.Now()
		}
		return time.Since(since) >= quietNB
	})
	if err != nil {
		return err
	}
	return werr
}

func (r restartResult) print(pods int) {
	fmt.Printf("\nrestart with %d pods: SIGTERM, exit, a new pod created while edgeovn is down, start; northbound writes counted in its database file from the SIGTERM until it was quiet for %s after the new pod's allocation\n\n", pods, quietNB)
	fmt.Println("| stop | start to the lease acquired | start to controller role running | start to the new pod annotated | edgeovn's northbound writes besides the new pod's | the new pod's own | ovn-northd's | load average |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---|")
	fmt.Printf("| %s | %s | %s | %s | %d | %d | %d | %s |\n", benchkit.Ms(r.stop), benchkit.Ms(r.toLease), benchkit.Ms(r.toRunning), benchkit.Ms(r.toNewPod), len(r.writes), r.ownPod, r.northd, r.loadavg)
	fmt.Printf("\nthe term's start, ms since it began (the lease acquired), as edgeovn logs it: %s\n", r.phases)
	for _, t := range r.writes {
		fmt.Printf("  write: tables %v %.200s\n", t.Tables, t.Raw)
	}
	if r.profile != "" {
		fmt.Println(r.profile)
	}
	fmt.Println("\ngoals: start to the first new pod allocated <= 300 ms with 1,000 pods, 0 northbound writes")
}
