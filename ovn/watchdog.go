package ovn

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ovn-org/libovsdb/client"
)

// Echo watchdog defaults. ovsdb-server drops a TCP client after about 10 s without traffic,
// and a peer that vanished without a FIN (a crashed host, a partition) is only noticed by
// probing, so TCP and SSL connections are probed more often than that.
const (
	DefaultEchoInterval = 4 * time.Second
	DefaultEchoTimeout  = 4 * time.Second
)

// needsWatchdog reports whether any endpoint is TCP or SSL; unix sockets are not probed.
func needsWatchdog(endpoints []string) bool {
	for _, ep := range endpoints {
		if !strings.HasPrefix(ep, "unix:") {
			return true
		}
	}
	return false
}

// watchedClient is a client with an Echo watchdog that Close also stops.
type watchedClient struct {
	client.Client
	stop func()
}

func (w *watchedClient) Close() {
	w.stop()
	w.Client.Close()
}

// echoer is the part of the client the watchdog uses, so tests can drive it with a fake.
type echoer interface {
	Connected() bool
	Echo(ctx context.Context) error
	Disconnect()
	CurrentEndpoint() string
}

// startWatchdog probes c with Echo every interval while it is connected and disconnects it
// when an echo fails or takes longer than timeout; libovsdb then reconnects on its own
// (moving on to the next endpoint if that one is gone). The returned function stops it.
func startWatchdog(c echoer, interval, timeout time.Duration, log *slog.Logger) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				probe(ctx, c, timeout, log)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// probe sends one echo; it returns whether the connection was dropped.
func probe(ctx context.Context, c echoer, timeout time.Duration, log *slog.Logger) bool {
	if !c.Connected() {
		return false
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.Echo(ectx)
	// ErrNotConnected: the connection went between Connected and Echo (a raft leader killed,
	// a server restarted); libovsdb noticed first and is already reconnecting.
	if err == nil || ctx.Err() != nil || errors.Is(err, client.ErrNotConnected) {
		return false
	}
	log.Warn("ovsdb echo failed, forcing reconnect", "endpoint", c.CurrentEndpoint(), "err", err)
	c.Disconnect()
	return true
}
