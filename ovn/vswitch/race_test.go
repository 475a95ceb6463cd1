package vswitch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

const raceRounds = 40

func (f fixture) connectAnother(t *testing.T) *Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Connect(f.ctx, ovn.ConnectRequest{Endpoints: []string{f.srv.Endpoint}, Log: log})
	if err != nil {
		t.Fatalf("connect another client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func racePort(i int) PortSpec {
	return PortSpec{Bridge: "br-int", Name: fmt.Sprintf("race%d_h", i), IfaceID: fmt.Sprintf("race-%d.default", i),
		ExternalIDs: map[string]string{"pod": fmt.Sprintf("default/race-%d", i)}}
}

// TestTwoClientsRacingAddPort has two clients, each with its own connection and cache, add
// the same ports at the same moment: one wins, the other is turned away by the guard or
// finds the port already there, and the database ends with each port once, whole.
func TestTwoClientsRacingAddPort(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	clients := []*Client{f.c, f.connectAnother(t)}
	start := make(chan struct{})
	errs := make(chan error, raceRounds*len(clients))
	var wg sync.WaitGroup
	for i := range raceRounds {
		for _, c := range clients {
			wg.Go(func() { <-start; errs <- c.AddPort(f.ctx, racePort(i)) })
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	conflicts := 0
	for err := range errs {
		if err != nil && !errors.Is(err, ovn.ErrConflict) {
			t.Errorf("racing AddPort failed with something other than a conflict: %v", err)
		}
		if err != nil {
			conflicts++
		}
	}
	t.Logf("%d of %d racing calls lost with ErrConflict", conflicts, raceRounds*len(clients))
	for _, c := range clients {
		for i := range raceRounds {
			settle(t, f.ctx, c, func() error { return c.AddPort(f.ctx, racePort(i)) })
		}
	}
	checkRacedPorts(t, f.ctx, f.connectAnother(t))
}

// settle retries op until the client's cache has caught up, then checks that once more
// writes nothing.
func settle(t *testing.T, ctx context.Context, c *Client, op func() error) {
	t.Helper()
	for err := op(); err != nil; err = op() {
		if !errors.Is(err, ovn.ErrConflict) || ctx.Err() != nil {
			t.Fatalf("after the race: %v", err)
		}
	}
	before := c.writes.Load()
	if err := op(); err != nil || c.writes.Load() != before {
		t.Fatalf("again after the race: %v, %d writes", err, c.writes.Load()-before)
	}
}

// checkRacedPorts reads a fresh client's cache, so the server's state: every port exactly
// once, on br-int exactly once, with exactly its own interface carrying its iface-id.
func checkRacedPorts(t *testing.T, ctx context.Context, c *Client) {
	t.Helper()
	var ports []*vswitchdb.Port
	var ifaces []*vswitchdb.Interface
	if err := c.ovs.List(ctx, &ports); err != nil {
		t.Fatal(err)
	}
	if err := c.ovs.List(ctx, &ifaces); err != nil {
		t.Fatal(err)
	}
	br, err := c.bridgeByName(ctx, "br-int")
	if err != nil || br == nil {
		t.Fatalf("br-int: %v", err)
	}
	for i := range raceRounds {
		spec := racePort(i)
		p := one(t, ports, spec.Name, func(p *vswitchdb.Port) string { return p.Name })
		iface := one(t, ifaces, spec.Name, func(r *vswitchdb.Interface) string { return r.Name })
		if n := count(br.Ports, p.UUID); n != 1 {
			t.Errorf("br-int holds port %s %d times", spec.Name, n)
		}
		if !slices.Equal(p.Interfaces, []string{iface.UUID}) || !ovn.HasAll(iface.ExternalIDs, spec.interfaceIDs()) {
			t.Errorf("port %s half-written: interfaces %v (want %s), external_ids %v", spec.Name, p.Interfaces, iface.UUID, iface.ExternalIDs)
		}
	}
	if want := raceRounds + 1; len(br.Ports) != want {
		t.Errorf("br-int has %d ports, want %d", len(br.Ports), want)
	}
}

func one[T any](t *testing.T, rows []*T, name string, nameOf func(*T) string) *T {
	t.Helper()
	var found []*T
	for _, r := range rows {
		if nameOf(r) == name {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d rows named %s, want exactly one", len(found), name)
	}
	return found[0]
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
