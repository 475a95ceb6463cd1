package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

var interrupt = os.Interrupt

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// pingTimes sends n pings 10 ms apart from the namespace and returns each reply's round trip.
func pingTimes(ctx context.Context, netns string, to netip.Addr, n int) ([]time.Duration, error) {
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
	return rtts, nil
}

// warmUp pings until replies come: the datapath drops first packets while it resolves
// neighbours.
func warmUp(ctx context.Context, p *path) error {
	var err error
	for range 50 {
		if _, err = podsim.Ping(ctx, p.from, p.to.IP()); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s: %w", p.name, err)
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
