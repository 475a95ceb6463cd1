package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// The writer is this program again, run inside the central's namespace (the members'
// addresses exist only inside the cluster's namespaces), with -writer: it connects to the NB
// members as edgeovn does and commits one small transaction every writeEvery, printing each
// commit's completion time and latency.
const writeEvery = 50 * time.Millisecond

// writerFlag runs this program as the writer, with the NB member list.
const writerFlag = "writer"

// runWriter is the writer's main: it stops when its parent stops it.
func runWriter(endpoints string) error {
	ctx := context.Background()
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := ovn.Connect(ctx, ovn.ConnectRequest{Endpoints: harness.SplitEndpoints(endpoints), Log: log}, dbModel)
	if err != nil {
		return err
	}
	defer c.Close()
	out := bufio.NewWriter(os.Stdout)
	for seq := 0; ; seq++ {
		op := ovsdb.Operation{Op: ovsdb.OperationInsert, Table: "Logical_Switch",
			Row: ovsdb.Row{"name": fmt.Sprintf("raftbench-%d", seq)}}
		start := time.Now()
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := c.Transact(tctx, op)
		cancel()
		if err == nil {
			_, err = ovsdb.CheckOperationResults(res, []ovsdb.Operation{op})
		}
		done := time.Now()
		if err != nil {
			fmt.Fprintf(out, "error %d %v\n", done.UnixNano(), err)
		} else {
			fmt.Fprintf(out, "commit %d %d\n", done.UnixNano(), done.Sub(start).Nanoseconds())
		}
		out.Flush()
		time.Sleep(writeEvery)
	}
}

// writer is the running writer process, seen from the bench.
type writer struct {
	p *harness.Process
}

func newWriter(ctx context.Context, central *harness.Rig, endpoints string) (*writer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := central.Start(ctx, harness.ProcessSpec{Name: "raftbench-writer", Path: self,
		Args: []string{"-" + writerFlag + "=" + endpoints}})
	if err != nil {
		return nil, err
	}
	w := &writer{p: p}
	// The first commit says the client is connected.
	if _, err := w.firstCommitAfter(ctx, time.Time{}, 60*time.Second); err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	return w, nil
}

func (w *writer) close() { _ = w.p.Stop() }

// commit is one line of the writer's output.
type commit struct {
	at      time.Time
	latency time.Duration
}

// commits parses the writer's output so far.
func (w *writer) commits() ([]commit, error) {
	b, err := os.ReadFile(w.p.Log)
	if err != nil {
		return nil, err
	}
	var out []commit
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "commit" {
			continue
		}
		at, err1 := strconv.ParseInt(f[1], 10, 64)
		lat, err2 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("writer output %q: %w", line, err)
		}
		out = append(out, commit{at: time.Unix(0, at), latency: time.Duration(lat)})
	}
	return out, nil
}

// firstCommitAfter waits for the first commit completed after t.
func (w *writer) firstCommitAfter(ctx context.Context, t time.Time, limit time.Duration) (commit, error) {
	deadline := time.Now().Add(limit)
	for {
		cs, err := w.commits()
		if err != nil {
			return commit{}, err
		}
		for _, c := range cs {
			if c.at.After(t) {
				return c, nil
			}
		}
		select {
		case <-w.p.Done():
			return commit{}, fmt.Errorf("writer exited: %v (log %s)", w.p.Wait(), w.p.Log)
		case <-ctx.Done():
			return commit{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return commit{}, fmt.Errorf("no commit within %v after %s (log %s)", limit, t.Format(time.RFC3339Nano), w.p.Log)
		}
	}
}
