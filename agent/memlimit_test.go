package agent

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"testing"
	"time"
)

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

// TestMemoryLimitStepsAsideWhileWiringPods: an ADD lifts the limit until hold after the last
// one; then it is back, following the live heap.
func TestMemoryLimitStepsAsideWhileWiringPods(t *testing.T) {
	const mib = 1 << 20
	m := newMemoryLimit(30*mib, slog.New(slog.DiscardHandler))
	now := time.Now()
	if l, wait := m.limitAt(now, 10*mib); l != 30*mib || wait != memoryLimitRecheck {
		t.Fatalf("before any ADD: limit %d, next look in %v; want 30 MiB, %v", l, wait, memoryLimitRecheck)
	}
	m.adding()
	if l, wait := m.limitAt(time.Now(), 10*mib); l != noMemoryLimit || wait <= 0 || wait > burstHold {
		t.Fatalf("right after an ADD: limit %d, held %v; want none for up to %v", l, wait, burstHold)
	}
	if l, _ := m.limitAt(time.Now().Add(burstHold+time.Millisecond), 40*mib); l != 80*mib {
		t.Fatalf("%v after the last ADD: limit %d MiB, want back at twice the live heap (80 MiB)", burstHold, l/mib)
	}
}

// TestMemoryLimitKeepFollowsADDs: the running keeper lifts the process's limit at an ADD and
// puts it back once the hold is over.
func TestMemoryLimitKeepFollowsADDs(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT set: the keeper leaves the limit alone")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const base = 1 << 40 // above any live heap here: the limit in place is exactly base
	m := newMemoryLimit(base, slog.New(slog.DiscardHandler))
	m.hold = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.keep(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	limitIs := func(want int64, what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); debug.SetMemoryLimit(-1) != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: limit %d, want %d", what, debug.SetMemoryLimit(-1), want)
			}
		}
	}
	limitIs(base, "at the start")
	m.adding()
	limitIs(noMemoryLimit, "after an ADD")
	limitIs(base, "once the hold is over")
}
