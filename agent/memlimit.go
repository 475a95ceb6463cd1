package agent

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// memoryLimitRecheck is how often the soft memory limit follows the live heap.
const memoryLimitRecheck = 10 * time.Second

// burstHold is how long after the last CNI ADD began the soft limit stays aside.
const burstHold = 5 * time.Second

// liveHeapMetric is the heap the last GC found reachable.
const liveHeapMetric = "/gc/heap/live:bytes"

// noMemoryLimit is debug.SetMemoryLimit's "no limit".
const noMemoryLimit = math.MaxInt64

// memoryLimit holds Go's soft memory limit (debug.SetMemoryLimit) at base, or at twice the
// live heap when that is more. With the default GOGC alone the runtime keeps heap it freed
// after a burst of pods (measured with ctrlbench: 44 MB anonymous memory with 1,000 pods, 28 MB
// under a 30 MiB limit); a fixed limit below a large cluster's live heap would make the GC run
// all the time, so the limit rises with the heap and never stands in its way.
//
// While pods are being wired (a CNI ADD began within burstHold) the limit steps aside and GOGC
// alone paces the collector: the limit counts the runtime's own memory too, so under it a burst
// left the heap a few MB above its live size and the collector ran every few MB allocated
// (48% of edgeovn's CPU over a 500-pod reboot's burst). It returns, and the freed memory with
// it, burstHold after the last ADD. It follows ADDs, not the collector's pace: a limit that
// stepped aside whenever the collector was busy flapped every second with 1,000 idle pods. A
// GOMEMLIMIT in the environment is the operator's choice and is left alone.
type memoryLimit struct {
	base int64
	hold time.Duration
	log  *slog.Logger
	// busyUntil is when the limit may return (unix nanoseconds): burstHold after the last ADD.
	busyUntil atomic.Int64
	kick      chan struct{}
}

func newMemoryLimit(base int64, log *slog.Logger) *memoryLimit {
	return &memoryLimit{base: base, hold: burstHold, log: log, kick: make(chan struct{}, 1)}
}

// enabled is false when there is no limit to keep: none configured, or GOMEMLIMIT set.
func (m *memoryLimit) enabled() bool { return m.base > 0 && os.Getenv("GOMEMLIMIT") == "" }

// adding is called as each CNI ADD begins; it never blocks.
func (m *memoryLimit) adding() {
	now := time.Now()
	if was := m.busyUntil.Swap(now.Add(m.hold).UnixNano()); was < now.UnixNano() {
		select { // the limit was in place: wake keep to lift it
		case m.kick <- struct{}{}:
		default:
		}
	}
}

// keep sets the limit now and whenever it should change, until ctx ends.
func (m *memoryLimit) keep(ctx context.Context) {
	if !m.enabled() {
		return
	}
	last := int64(-1)
	for {
		l, wait := m.limitAt(time.Now(), liveHeap())
		if l != last {
			debug.SetMemoryLimit(l)
			m.log.Debug("soft memory limit", "bytes", l, "wiring_pods", l == noMemoryLimit)
			last = l
		}
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		case <-time.After(wait):
		}
	}
}

// limitAt is the limit at now for a live heap, and how long it holds: none until busyUntil
// while pods are being wired, else memoryLimitFor for memoryLimitRecheck.
func (m *memoryLimit) limitAt(now time.Time, live int64) (int64, time.Duration) {
	if until := time.Unix(0, m.busyUntil.Load()); now.Before(until) {
		return noMemoryLimit, until.Sub(now)
	}
	return memoryLimitFor(m.base, live), memoryLimitRecheck
}

// liveHeap is the heap the last GC found reachable.
func liveHeap() int64 {
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64())
}

// memoryLimitFor is the soft limit for a live heap: base, or twice the live heap when more.
func memoryLimitFor(base, live int64) int64 { return max(base, 2*live) }
