package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
)

// bootMetrics is where the booted edgeovn serves /metrics and, with --pprof, Go's profiles
// (the daemon's default metrics address, inside the rig's namespace).
const bootMetrics = "127.0.0.1:10665"

// profiler fetches the booted edgeovn's profiles into a folder (-pprof): a CPU profile from
// the burst for cpuSeconds, and the allocations since its start once every pod is reachable.
type profiler struct {
	dir    string
	client *http.Client
	cpu    chan error
}

const cpuSeconds = 4

func newProfiler(dir string, rig *harness.Rig) (*profiler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-pprof: %w", err)
	}
	return &profiler{dir: dir, client: &http.Client{Transport: &http.Transport{DialContext: rig.DialContext}}}, nil
}

// startCPU begins the CPU profile in the background.
func (p *profiler) startCPU(ctx context.Context) {
	if p == nil {
		return
	}
	p.cpu = make(chan error, 1)
	go func() { p.cpu <- p.fetch(ctx, fmt.Sprintf("profile?seconds=%d", cpuSeconds), "cpu.pb.gz") }()
}

// finish waits for the CPU profile, then fetches the allocations, reporting where they are.
func (p *profiler) finish(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var err error
	if p.cpu != nil {
		err = <-p.cpu
	}
	if aerr := p.fetch(ctx, "allocs", "allocs.pb.gz"); err == nil {
		err = aerr
	}
	if err == nil {
		fmt.Printf("  profiles of the booted edgeovn (CPU: %d s from the burst; allocations since its start): %s\n", cpuSeconds, p.dir)
	}
	return err
}

func (p *profiler) fetch(ctx context.Context, path, file string) error {
	ctx, cancel := context.WithTimeout(ctx, cpuSeconds*time.Second+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+bootMetrics+"/debug/pprof/"+path, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("-pprof: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("-pprof: GET %s: %s", path, resp.Status)
	}
	f, err := os.Create(filepath.Join(p.dir, file))
	if err != nil {
		return fmt.Errorf("-pprof: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("-pprof: %s: %w", file, err)
	}
	return f.Close()
}
