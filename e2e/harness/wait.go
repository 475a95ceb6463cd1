package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Readiness bounds. The API server's includes etcd warm-up and its post-start hooks.
const (
	daemonReadyTimeout    = 30 * time.Second
	apiServerReadyTimeout = 90 * time.Second
	pollInterval          = 50 * time.Millisecond
	logTailLines          = 20
)

// waitReady polls check until it succeeds, the process exits, the timeout passes or ctx ends.
// Every failure says which component, why, and ends with the tail of its log.
func waitReady(ctx context.Context, p *Process, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("%w: %s (pid %d) exited while starting (%v); last lines of %s:\n%s",
				ErrNotReady, p.Name, p.PID, p.Wait(), p.Log, logTail(p.Log))
		case <-ctx.Done():
			return fmt.Errorf("%w: %s (pid %d) not ready after %s: %v; last lines of %s:\n%s",
				ErrNotReady, p.Name, p.PID, timeout, err, p.Log, logTail(p.Log))
		case <-tick.C:
		}
	}
}

// socketAccepts is a readiness check: the unix socket exists and accepts a connection.
func socketAccepts(path string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", path)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// httpOK is a readiness check: a plain HTTP GET from inside the network namespace at
// netnsPath answers 200.
func httpOK(netnsPath, url string) func(context.Context) error {
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return dialInNetns(ctx, netnsPath, network, address)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

// logTail returns the last lines of a log file, or why it could not be read.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, "\n")
}
