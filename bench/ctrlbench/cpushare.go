package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
)

// cpuShare is the CPU each process of the rig (and edgeovn and the bench) used over a span:
// on a 2-core machine a burst is CPU-bound, and this says who spends it.
type cpuShare struct {
	wall  time.Duration
	procs []procCPU // most first
}

type procCPU struct {
	name string
	cpu  time.Duration
}

// cpuSnapshot is utime+stime by process name (summed over processes of one name, such as the
// two ovsdb-servers) at one moment.
type cpuSnapshot struct {
	at  time.Time
	cpu map[string]time.Duration
}

// snapshotCPU reads the CPU time of the rig's live processes, edgeovn's and the bench's own.
func (b *bench) snapshotCPU() cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), cpu: map[string]time.Duration{}}
	add := func(name string, pid int) {
		if t, err := benchkit.CPUTime(pid); err == nil {
			s.cpu[name] += t
		}
	}
	for _, p := range b.rig.Processes() {
		if p.Name != "edgeovn" {
			add(p.Name, p.PID)
		}
	}
	bench := "ctrlbench (creates pods, watches them)"
	if b.proc != nil {
		add("edgeovn", b.proc.PID)
	} else {
		bench = "ctrlbench (creates pods, watches them, the bare annotator)"
	}
	add(bench, os.Getpid())
	return s
}

// since is the CPU used from s0 to s.
func (s cpuSnapshot) since(s0 cpuSnapshot) cpuShare {
	c := cpuShare{wall: s.at.Sub(s0.at)}
	for name, t := range s.cpu {
		if d := t - s0.cpu[name]; d > 0 {
			c.procs = append(c.procs, procCPU{name: name, cpu: d})
		}
	}
	slices.SortFunc(c.procs, func(a, b procCPU) int { return cmp.Compare(b.cpu, a.cpu) })
	return c
}

func (c cpuShare) String() string {
	var total time.Duration
	parts := make([]string, 0, len(c.procs))
	for _, p := range c.procs {
		total += p.cpu
		parts = append(parts, fmt.Sprintf("%s %.2f s", p.name, p.cpu.Seconds()))
	}
	return fmt.Sprintf("CPU over the burst's %.2f s (of %.2f s the 2 cores had): %.2f s: %s",
		c.wall.Seconds(), 2*c.wall.Seconds(), total.Seconds(), strings.Join(parts, ", "))
}
