package ovn

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ovn-org/libovsdb/client"
)

type fakeEchoer struct {
	connected    bool
	echo         func(ctx context.Context) error
	disconnected atomic.Int32
}

func (f *fakeEchoer) Connected() bool                { return f.connected }
func (f *fakeEchoer) Echo(ctx context.Context) error { return f.echo(ctx) }
func (f *fakeEchoer) Disconnect()                    { f.disconnected.Add(1) }
func (f *fakeEchoer) CurrentEndpoint() string        { return "tcp:127.0.0.1:6641" }

func TestProbe(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name      string
		connected bool
		echo      func(ctx context.Context) error
		wantDrop  bool
	}{
		{"answered", true, func(context.Context) error { return nil }, false},
		{"error", true, func(context.Context) error { return errors.New("incorrect server response") }, true},
		{"no answer within timeout", true, hang, true},
		{"not connected: libovsdb is already reconnecting", false, hang, false},
		{"connection lost under the echo: libovsdb is already reconnecting", true, func(context.Context) error { return client.ErrNotConnected }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEchoer{connected: tt.connected, echo: tt.echo}
			dropped := probe(context.Background(), f, 10*time.Millisecond, quiet)
			if dropped != tt.wantDrop || (f.disconnected.Load() == 1) != tt.wantDrop {
				t.Fatalf("dropped=%v disconnects=%d, want drop=%v", dropped, f.disconnected.Load(), tt.wantDrop)
			}
		})
	}
}

func TestWatchdogStopsAndDoesNotDropOnStop(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	started := make(chan struct{}, 1)
	f := &fakeEchoer{connected: true, echo: func(ctx context.Context) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	stop := startWatchdog(f, time.Millisecond, time.Hour, quiet)
	<-started
	stop() // must return although an echo is outstanding, and must not count as a failure
	if n := f.disconnected.Load(); n != 0 {
		t.Fatalf("stopping the watchdog disconnected the client %d times", n)
	}
}

func TestNeedsWatchdog(t *testing.T) {
	if needsWatchdog([]string{"unix:/run/ovn/ovnnb_db.sock"}) {
		t.Error("unix socket probed")
	}
	if !needsWatchdog([]string{"unix:/a", "tcp:127.0.0.1:6641"}) || !needsWatchdog([]string{"ssl:10.0.0.1:6641"}) {
		t.Error("tcp/ssl endpoint not probed")
	}
}

func TestMetrics(t *testing.T) {
	m := NewMetrics(slog.New(slog.NewTextHandler(io.Discard, nil)), 100*time.Millisecond)
	m.Observe(500*time.Microsecond, 2, nil)
	m.Observe(3*time.Millisecond, 2, ErrConflict)
	m.Observe(time.Second, 1, nil)
	m.Observe(time.Minute, 1, errors.New("broken pipe"))
	s := m.Stats()
	if s.Transactions != 4 || s.Failures != 2 || s.Conflicts != 1 || s.Slow != 2 {
		t.Fatalf("counts = %+v", s)
	}
	if s.MaxLatency != time.Minute || s.TotalLatency != time.Minute+time.Second+3500*time.Microsecond {
		t.Fatalf("latency = %v max %v", s.TotalLatency, s.MaxLatency)
	}
	want := []int64{1, 1, 0, 0, 0, 1, 1}
	for i := range want {
		if s.Buckets[i] != want[i] {
			t.Fatalf("buckets = %v, want %v", s.Buckets, want)
		}
	}
	s.Buckets[0] = 99
	if m.Stats().Buckets[0] != 1 {
		t.Fatal("Stats shares its bucket slice")
	}
}
