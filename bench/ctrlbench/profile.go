package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// metricsAddress is where the rig's edgeovn serves /metrics and, with --pprof, its profiles.
const metricsAddress = "127.0.0.1:10665"

// profiler saves edgeovn's Go profiles into a directory (-profile): a CPU profile over each
// measured span and a heap profile at each memory reading. It needs edgeovn's --pprof flag,
// which ctrlbench adds when -profile is set.
type profiler struct {
	dir    string
	client *http.Client
}

func newProfiler(dir string, dial func(ctx context.Context, network, address string) (net.Conn, error)) *profiler {
	if dir == "" {
		return nil
	}
	return &profiler{dir: dir, client: &http.Client{Transport: &http.Transport{DialContext: dial}}}
}

// trace starts an execution trace of d in the background (go tool trace -pprof=net|sync
// shows where the goroutines wait); the returned function waits for it.
func (p *profiler) trace(ctx context.Context, name string, d time.Duration) func() string {
	if p == nil {
		return func() string { return "" }
	}
	done := make(chan string, 1)
	go func() {
		done <- p.save(ctx, name+".trace", fmt.Sprintf("/debug/pprof/trace?seconds=%d", int(d.Seconds())))
	}()
	return func() string { return <-done }
}

// startTrace is trace for a process just started, with a CPU profile of the same span (the
// trace then holds the CPU samples too): both wait (up to 5 s) for its server to answer
// first, so they cover the start from its first milliseconds.
func (p *profiler) startTrace(ctx context.Context, name string, d time.Duration) func() string {
	if p == nil {
		return func() string { return "" }
	}
	done := make(chan string, 2)
	go func() {
		p.waitServing(ctx)
		go func() {
			done <- p.save(ctx, name+".cpu.pprof", fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())))
		}()
		done <- p.save(ctx, name+".trace", fmt.Sprintf("/debug/pprof/trace?seconds=%d", int(d.Seconds())))
	}()
	return func() string { return <-done + "\n" + <-done }
}

// waitServing waits (up to 5 s) until edgeovn's metrics server accepts connections.
func (p *profiler) waitServing(ctx context.Context) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := p.client.Transport.(*http.Transport).DialContext(ctx, "tcp", metricsAddress)
		if err == nil {
			conn.Close()
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// cpu starts a CPU profile of d in the background; the returned function waits for it and
// returns where it was saved or why not.
func (p *profiler) cpu(ctx context.Context, name string, d time.Duration) func() string {
	if p == nil {
		return func() string { return "" }
	}
	done := make(chan string, 1)
	go func() {
		done <- p.save(ctx, name+".cpu.pprof", fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())))
	}()
	return func() string { return <-done }
}

// heap saves a heap profile now, and its text form, which ends with the runtime's memory
// statistics (heap, stacks, runtime overhead: what of the resident memory Go accounts for).
func (p *profiler) heap(ctx context.Context, name string) string {
	if p == nil {
		return ""
	}
	return p.save(ctx, name+".heap.pprof", "/debug/pprof/heap?gc=1") + "\n" +
		p.save(ctx, name+".heap.txt", "/debug/pprof/heap?debug=1")
}

func (p *profiler) save(ctx context.Context, file, path string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddress+path, nil)
	if err != nil {
		return "profile " + file + ": " + err.Error()
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return "profile " + file + ": " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("profile %s: %s (is edgeovn running with --pprof?)", file, resp.Status)
	}
	out := filepath.Join(p.dir, file)
	f, err := os.Create(out)
	if err != nil {
		return "profile " + file + ": " + err.Error()
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		return "profile " + file + ": " + err.Error()
	}
	return "profile saved: " + out
}
