package benchkit

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// PingTimes sends n pings 10 ms apart from the network namespace netns (a name under
// /run/netns) and returns each reply's round trip.
func PingTimes(ctx context.Context, netns string, to netip.Addr, n int) ([]time.Duration, error) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", netns, "ping", "-n", "-c", strconv.Itoa(n),
		"-i", "0.01", "-W", "1", to.String()).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ping %s from %s: %w\n%s", to, netns, err, out)
	}
	var rtts []time.Duration
	for _, m := range pingTime.FindAllStringSubmatch(string(out), -1) {
		ms, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return nil, fmt.Errorf("ping output %q: %w", m[0], err)
		}
		rtts = append(rtts, time.Duration(ms*float64(time.Millisecond)))
	}
	if len(rtts) == 0 {
		return nil, fmt.Errorf("ping %s from %s: no replies\n%s", to, netns, out)
	}
	return rtts, nil
}

// WarmUp pings from the sandbox until replies come, for up to 10 s: the datapath drops first
// packets while it resolves neighbours and installs flows.
func WarmUp(ctx context.Context, from *podsim.Sandbox, to netip.Addr) error {
	var err error
	for range 50 {
		if _, err = podsim.Ping(ctx, from, to); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no ping reply: %w", err)
}

// LoadAvg is the machine's load average over 1, 5 and 15 minutes, "?" when unknown: a
// figure's table names it, taken on a shared machine.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
