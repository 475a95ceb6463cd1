package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// variant is edgeovn started again, on the same rig and pods, from another build or with
// other flags, for its memory beside this build's.
type variant struct {
	name  string
	bin   string
	extra []string
	u     usage
	child usage // edgeovn-bgp's, when it runs
}

// variants restarts edgeovn as each of -compare-bin's builds (each with an IPAM database of
// its own) and, with -bgp, as this build
// with a BGP neighbour (one that never answers: the speaker process runs, nothing is
// announced), and reads the memory of each (and of its edgeovn-bgp child) the same way as
// after the restart.
func (b *bench) variants(ctx context.Context, restarted usage) error {
	vs := []*variant{{name: "this build (" + b.cfg.bin + ")", bin: b.cfg.bin, u: restarted}}
	for i, dir := range b.cfg.compareBins {
		abs, _ := filepath.Abs(dir)
		// An older build may not open this build's IPAM database (a newer schema): it gets an
		// empty one of its own, which it fills from the cluster (the pods' annotations, the
		// northbound ports) as any new leader does.
		vs = append(vs, &variant{name: "compared build (" + abs + ")", bin: abs,
			extra: []string{fmt.Sprintf("--ipam-db=%s/ipam-compared-%d.db", b.rig.Dir, i)}})
	}
	if b.cfg.bgp {
		vs = append(vs, &variant{name: "this build, BGP on (one neighbour, never up)", bin: b.cfg.bin,
			extra: []string{"--neighbor-address=192.0.2.1", "--router-id=192.0.2.9", "--holdtime=9s"}})
	}
	base := b.spec
	for _, v := range vs[1:] {
		if err := b.proc.Stop(); err != nil {
			return err
		}
		b.spec = base
		b.spec.BinDir, b.spec.Extra = v.bin, append(append([]string{}, base.Extra...), v.extra...)
		if err := b.startDaemon(ctx); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		var err error
		if v.u, err = b.usage(ctx, v.name, 0); err != nil {
			return err
		}
		if pid := childNamed(b.proc.PID, "edgeovn-bgp"); pid > 0 {
			v.child.rssKB, v.child.hwmKB, v.child.anonKB, v.child.fileKB, _ = memory(pid)
		}
	}
	b.spec = base
	printVariants(b.cfg.restartPods, vs)
	return nil
}

func printVariants(pods int, vs []*variant) {
	fmt.Printf("\nedgeovn restarted as each build, %d pods, read %s after its controller role runs\n\n", pods, quietBefore)
	fmt.Println("| build | edgeovn binary | VmRSS | RssAnon | RssFile | edgeovn-bgp VmRSS (RssAnon, RssFile) | goroutines | kubeovn.io watches | load average |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---|---|")
	for _, v := range vs {
		child := "not running"
		if v.child.rssKB > 0 {
			child = fmt.Sprintf("%s (%s, %s); both: %s", mb(v.child.rssKB), mb(v.child.anonKB), mb(v.child.fileKB), mb(v.u.rssKB+v.child.rssKB))
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v.name, size(filepath.Join(v.bin, "edgeovn")), mb(v.u.rssKB), mb(v.u.anonKB), mb(v.u.fileKB), child,
			v.u.goroutines, v.u.watches, v.u.loadavg)
	}
	fmt.Println()
	said := map[string]bool{}
	for _, v := range vs {
		if s := size(filepath.Join(v.bin, "edgeovn-bgp")); s != "-" && !said[v.bin] {
			said[v.bin] = true
			fmt.Printf("%s: edgeovn-bgp %s\n", v.bin, s)
		}
	}
}

// size is a file's size in MB, or "-".
func size(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
}

// childNamed is the PID of parent's child process named name (waiting for it a few
// seconds), or 0.
func childNamed(parent int, name string) int {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, path := range stats {
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			s := string(b)
			open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
			if open < 0 || closing < open || s[open+1:closing] != name {
				continue
			}
			if fs := strings.Fields(s[closing+1:]); len(fs) > 1 && fs[1] == strconv.Itoa(parent) {
				pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
				return pid
			}
		}
	}
	return 0
}
