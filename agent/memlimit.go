package agent

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryLimitRecheck is how often the soft memory limit follows the live heap and the
// collector's pace: a burst of pods is over in a few seconds.
const memoryLimitRecheck = time.Second

// gcBusyCores is the collector's CPU (in cores, over the last recheck) above which the soft
// limit steps aside: idle, edgeovn's collector uses about 0.2% of a core; in a burst of pods
// under the limit it took half of edgeovn's CPU (48% of 7 s over a 500-pod burst).
const gcBusyCores = 0.05

// The runtime metrics the limit follows.
const (
	liveHeapMetric = "/gc/heap/live:bytes"               // the heap the last GC found reachable
	gcCPUMetric    = "/cpu/classes/gc/total:cpu-seconds" // the collector's CPU since the start
)

// noMemoryLimit is debug.SetMemoryLimit's "no limit".
const noMemoryLimit = math.MaxInt64

// keepMemoryLimit holds Go's soft memory limit (debug.SetMemoryLimit) at base, or at twice the
// live heap when that is more, until ctx ends. With the default GOGC alone the runtime keeps
// heap it freed after a burst of pods (measured with ctrlbench: 44 MB anonymous memory with
// 1,000 pods, 28 MB under a 30 MiB limit); a fixed limit below a large cluster's live heap
// would make the GC run all the time, so the limit rises with the heap. During a burst the
// limit (which counts the runtime's own memory too) left the heap only a few MB above its live
// size, and the collector ran every few MB allocated: while the collector is busy (more than
// gcBusyCores) the limit steps aside and GOGC alone paces it; the limit returns, and with it the
// freed memory to the system, once the burst is over. A GOMEMLIMIT in the environment is the
// operator's choice and is left alone.
func keepMemoryLimit(ctx context.Context, base int64, log *slog.Logger) {
	if base <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	sample := []metrics.Sample{{Name: liveHeapMetric}, {Name: gcCPUMetric}}
	last, lastGC, lastAt := int64(-1), -1.0, time.Now()
	for {
		metrics.Read(sample)
		now := time.Now()
		var live int64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(sample[0].Value.Uint64())
		}
		gc, gcCores := 0.0, 0.0
		if sample[1].Value.Kind() == metrics.KindFloat64 {
			gc = sample[1].Value.Float64()
		}
		if lastGC >= 0 {
			gcCores = (gc - lastGC) / now.Sub(lastAt).Seconds()
		}
		lastGC, lastAt = gc, now
		if l := memoryLimitFor(base, live, gcCores); l != last {
			debug.SetMemoryLimit(l)
			log.Debug("soft memory limit", "bytes", l, "live_heap", live, "gc_cores", gcCores)
			last = l
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(memoryLimitRecheck):
		}
	}
}

// memoryLimitFor is the soft limit for a live heap: base, or twice the live heap when more;
// none while the collector uses more than gcBusyCores.
func memoryLimitFor(base, live int64, gcCores float64) int64 {
	if gcCores > gcBusyCores {
		return noMemoryLimit
	}
	return max(base, 2*live)
}
