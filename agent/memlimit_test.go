package agent

import "testing"

func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		base, live int64
		gcCores    float64
		want       int64
	}{
		{30 * mib, 0, 0, 30 * mib},
		{30 * mib, 10 * mib, 0.002, 30 * mib}, // idle: the collector at 0.2% of a core
		{30 * mib, 15 * mib, 0.05, 30 * mib},
		{30 * mib, 40 * mib, 0, 80 * mib}, // a large cluster: the limit rises with the heap
		// A burst: the collector busy under the limit; GOGC alone paces it until it calms.
		{30 * mib, 10 * mib, 0.3, noMemoryLimit},
		{30 * mib, 40 * mib, 0.06, noMemoryLimit},
	} {
		if got := memoryLimitFor(c.base, c.live, c.gcCores); got != c.want {
			t.Errorf("memoryLimitFor(%d MiB, live %d MiB, gc %.3f cores) = %d, want %d", c.base/mib, c.live/mib, c.gcCores, got, c.want)
		}
	}
}
