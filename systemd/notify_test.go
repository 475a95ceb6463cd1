package systemd

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSystemd listens where NOTIFY_SOCKET points and returns the messages it receives.
func fakeSystemd(t *testing.T) <-chan string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", sock)
	msgs := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	return msgs
}

func next(t *testing.T, msgs <-chan string) string {
	t.Helper()
	select {
	case m := <-msgs:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no notification")
		return ""
	}
}

// TestHealthNotifies: READY=1 the first time the node is ready, STATUS= on every change after.
func TestHealthNotifies(t *testing.T) {
	msgs := fakeSystemd(t)
	n := NewNotifier(slog.New(slog.DiscardHandler))
	n.Health(errors.New("datapath not ready: ovn-controller: not running"))
	n.Health(nil)
	n.Health(errors.New("datapath not ready: ovs-vswitchd: not running"))
	n.Health(nil)
	want := []string{
		"STATUS=not ready: datapath not ready: ovn-controller: not running",
		"READY=1\nSTATUS=node role ready",
		"STATUS=not ready: datapath not ready: ovs-vswitchd: not running",
		"STATUS=node role ready",
	}
	for _, w := range want {
		if got := next(t, msgs); got != w {
			t.Fatalf("notification %q, want %q", got, w)
		}
	}
}

// TestWatchdogFollowsAlive: keep-alives stop while alive fails and resume when it passes.
func TestWatchdogFollowsAlive(t *testing.T) {
	msgs := fakeSystemd(t)
	t.Setenv("WATCHDOG_USEC", strconv.Itoa(int((40 * time.Millisecond).Microseconds())))
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	var healthy atomic.Bool
	healthy.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = NewNotifier(slog.New(slog.DiscardHandler)).Watchdog(ctx, func() error {
			if !healthy.Load() {
				return errors.New("open_vswitch database not answering")
			}
			return nil
		})
	}()
	if got := next(t, msgs); got != "WATCHDOG=1" {
		t.Fatalf("first keep-alive %q", got)
	}
	healthy.Store(false)
	time.Sleep(60 * time.Millisecond) // a keep-alive already on its way may still arrive
	for len(msgs) > 0 {
		<-msgs
	}
	select {
	case m := <-msgs:
		t.Fatalf("keep-alive %q sent while not alive", m)
	case <-time.After(200 * time.Millisecond):
	}
	healthy.Store(true)
	if got := next(t, msgs); !strings.HasPrefix(got, "WATCHDOG=1") {
		t.Fatalf("keep-alive after recovery %q", got)
	}
}
