package hostnet

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
)

// ipForward is per network namespace: /proc/sys/net resolves to the namespace of the thread
// that opens it.
const ipForward = "/proc/sys/net/ipv4/ip_forward"

// ensureForwarding turns IPv4 forwarding on unless it is on already; writing the sysctl
// resets per-interface settings the kernel derives from it, so it is not rewritten needlessly.
func ensureForwarding(_ context.Context, _ Spec, log *slog.Logger) error {
	cur, err := os.ReadFile(ipForward)
	if err != nil {
		return fmt.Errorf("read %s: %w", ipForward, err)
	}
	if string(bytes.TrimSpace(cur)) == "1" {
		return nil
	}
	if err := os.WriteFile(ipForward, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("enable ipv4 forwarding: %w", err)
	}
	log.Info("enabled ipv4 forwarding")
	return nil
}
