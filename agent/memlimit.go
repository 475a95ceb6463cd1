package agent

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryLimitRecheck is how often the soft memory limit follows the live heap.
const memoryLimitRecheck = 10 * time.Second

// liveHeapMetric is the heap the last GC found reachable.
const liveHeapMetric = "/gc/heap/live:bytes"

// keepMemoryLimit holds Go's soft memory limit (debug.SetMemoryLimit) at base, or at twice the
// live heap when that is more, until ctx ends. With the default GOGC alone the runtime keeps
// heap it freed after a burst of pods (measured with ctrlbench: 44 MB anonymous memory with
// 1,000 pods, 28 MB under a 30 MiB limit); a fixed limit below a large cluster's live heap
// would make the GC run all the time, so the limit rises with the heap and never stands in
// its way. A GOMEMLIMIT in the environment is the operator's choice and is left alone.
func keepMemoryLimit(ctx context.Context, base int64, log *slog.Logger) {
	if base <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	last := int64(-1)
	for {
		metrics.Read(sample)
		var live int64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(sample[0].Value.Uint64())
		}
		if l := memoryLimitFor(base, live); l != last {
			debug.SetMemoryLimit(l)
			log.Debug("soft memory limit", "bytes", l, "live_heap", live)
			last = l
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(memoryLimitRecheck):
		}
	}
}

// memoryLimitFor is the soft limit for a live heap: base, or twice the live heap when more.
func memoryLimitFor(base, live int64) int64 { return max(base, 2*live) }
