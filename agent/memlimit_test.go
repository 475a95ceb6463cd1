package agent

import "testing"

func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ base, live, want int64 }{
		{30 * mib, 0, 30 * mib},
		{30 * mib, 10 * mib, 30 * mib},
		{30 * mib, 15 * mib, 30 * mib},
		{30 * mib, 40 * mib, 80 * mib}, // a large cluster: the limit never stands in the heap's way
	} {
		if got := memoryLimitFor(c.base, c.live); got != c.want {
			t.Errorf("memoryLimitFor(%d MiB, live %d MiB) = %d MiB, want %d MiB", c.base/mib, c.live/mib, got/mib, c.want/mib)
		}
	}
}
