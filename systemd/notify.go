package systemd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier tells systemd about the daemon's state.
type Notifier struct{ log *slog.Logger }

// NewNotifier returns a Notifier logging failures to log.
func NewNotifier(log *slog.Logger) *Notifier { return &Notifier{log: log} }

// Ready says the node role is up: systemd then starts the units ordered after edgeovn.
func (n *Notifier) Ready(status string) { n.send(daemon.SdNotifyReady + "\nSTATUS=" + status) }

// Status updates the one-line status `systemctl status edgeovn` shows.
func (n *Notifier) Status(status string) { n.send("STATUS=" + status) }

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
