package systemd

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier tells systemd about the daemon's state.
type Notifier struct {
	log       *slog.Logger
	readySent atomic.Bool
}

// NewNotifier returns a Notifier logging failures to log.
func NewNotifier(log *slog.Logger) *Notifier { return &Notifier{log: log} }

// Ready says the node role is up: systemd then starts the units ordered after edgeovn.
func (n *Notifier) Ready(status string) { n.send(daemon.SdNotifyReady + "\nSTATUS=" + status) }

// Status updates the one-line status `systemctl status edgeovn` shows.
func (n *Notifier) Status(status string) { n.send("STATUS=" + status) }

// Health turns the node's readiness verdicts into notifications: READY=1 the first time it
// is ready (systemd then counts the unit as started and starts what is ordered after it),
// and STATUS= on every change, so `systemctl status edgeovn` says what is wrong. systemd has
// no way to take READY back; STATUS is where "not ready" shows.
func (n *Notifier) Health(err error) {
	switch {
	case err == nil && n.readySent.CompareAndSwap(false, true):
		n.Ready("node role ready")
	case err == nil:
		n.Status("node role ready")
	default:
		n.Status("not ready: " + err.Error())
	}
}

// Stopping says shutdown has begun.
func (n *Notifier) Stopping() { n.send(daemon.SdNotifyStopping) }

func (n *Notifier) send(state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		n.log.Warn("notify systemd", "err", err)
	}
}

// Watchdog sends keep-alives at half the unit's WatchdogSec until ctx ends, as long as alive
// reports the daemon healthy; it returns at once when the unit has no watchdog.
func (n *Notifier) Watchdog(ctx context.Context, alive func() error) error {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		return fmt.Errorf("read systemd watchdog settings: %w", err)
	}
	if interval == 0 {
		return nil
	}
	t := time.NewTicker(interval / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := alive(); err != nil {
				n.log.Warn("withholding watchdog keep-alive", "err", err)
				continue
			}
			n.send(daemon.SdNotifyWatchdog)
		}
	}
}
