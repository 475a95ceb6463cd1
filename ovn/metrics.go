package ovn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/ovsdb"
)

// DefaultSlowTransaction is the latency above which a transaction is logged as slow; a pod
// transaction takes about 1 ms against a local ovsdb-server.
const DefaultSlowTransaction = 500 * time.Millisecond

// LatencyBuckets are the upper bounds of Stats.Buckets; the last bucket counts the rest.
var LatencyBuckets = []time.Duration{
	time.Millisecond, 5 * time.Millisecond, 25 * time.Millisecond,
	100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second,
}

// Stats is a snapshot of one client's write transactions.
type Stats struct {
	Transactions int64         // committed or attempted transactions
	Failures     int64         // of which failed (transport error or a failed operation)
	Conflicts    int64         // of which failed because a wait guard fired (ErrConflict)
	Slow         int64         // of which took longer than the slow threshold
	TotalLatency time.Duration // sum over all transactions
	MaxLatency   time.Duration
	// Buckets[i] counts transactions up to LatencyBuckets[i]; the extra last one, the rest.
	Buckets []int64
}

// Metrics records the transactions of one client. The zero value is not usable; use
// NewMetrics. It is safe for concurrent use.
type Metrics struct {
	log  *slog.Logger
	slow time.Duration

	mu sync.Mutex
	s  Stats
}

// NewMetrics returns Metrics that warn on log for transactions slower than slow
// (zero: DefaultSlowTransaction).
func NewMetrics(log *slog.Logger, slow time.Duration) *Metrics {
	if slow <= 0 {
		slow = DefaultSlowTransaction
	}
	if log == nil {
		log = slog.Default()
	}
	return &Metrics{log: log, slow: slow, s: Stats{Buckets: make([]int64, len(LatencyBuckets)+1)}}
}

// Transact is the package Transact, timed and counted.
func (m *Metrics) Transact(ctx context.Context, c client.Client, ops []ovsdb.Operation) error {
	if len(ops) == 0 {
		return nil
	}
	start := time.Now()
	err := Transact(ctx, c, ops)
	m.Observe(time.Since(start), len(ops), err)
	return err
}

// Observe records one transaction of n operations that took d and ended with err.
func (m *Metrics) Observe(d time.Duration, n int, err error) {
	m.mu.Lock()
	m.s.Transactions++
	if err != nil {
		m.s.Failures++
		if isConflict(err) {
			m.s.Conflicts++
		}
	}
	m.s.TotalLatency += d
	m.s.MaxLatency = max(m.s.MaxLatency, d)
	m.s.Buckets[bucket(d)]++
	slow := d > m.slow
	if slow {
		m.s.Slow++
	}
	m.mu.Unlock()
	if slow {
		m.log.Warn("slow ovsdb transaction", "duration", d, "operations", n, "err", err)
	}
}

// Stats returns a copy of the counters.
func (m *Metrics) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.s
	s.Buckets = append([]int64(nil), m.s.Buckets...)
	return s
}

func bucket(d time.Duration) int {
	for i, b := range LatencyBuckets {
		if d <= b {
			return i
		}
	}
	return len(LatencyBuckets)
}
