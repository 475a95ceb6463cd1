package northbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// raceRounds is how many names each race test fights over; every name is raced by two
// clients at once, and all rounds are released together.
const raceRounds = 40

// connectAnother opens a second, independent client (its own connection and cache) to the
// fixture's server.
func connectAnother(t *testing.T, f fixture) *Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Connect(f.ctx, ovn.ConnectRequest{Endpoints: []string{f.srv.Endpoint}, Log: log})
	if err != nil {
		t.Fatalf("connect another client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// race runs op(c, i) for every round i on both clients at once and returns every error.
func race(clients []*Client, op func(c *Client, i int) error) []error {
	start := make(chan struct{})
	errs := make([]error, raceRounds*len(clients))
	var wg sync.WaitGroup
	for i := range raceRounds {
		for k, c := range clients {
			wg.Go(func() {
				<-start
				errs[i*len(clients)+k] = op(c, i)
			})
		}
	}
	close(start)
	wg.Wait()
	return errs
}

// checkRaceErrors accepts success and ErrConflict (the guard turning away a loser) only.
func checkRaceErrors(t *testing.T, errs []error) {
	t.Helper()
	conflicts := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ovn.ErrConflict):
			conflicts++
		default:
			t.Errorf("racing writer failed with something other than a conflict: %v", err)
		}
	}
	t.Logf("%d of %d racing calls lost with ErrConflict", conflicts, len(errs))
}

// settle retries op until the client's cache has caught up and it succeeds, then checks that
// calling it once more writes nothing: the loser ends idempotent, not stuck.
func settle(t *testing.T, ctx context.Context, c *Client, what string, op func() error) {
	t.Helper()
	for {
		err := op()
		if err == nil {
			break
		}
		if !errors.Is(err, ovn.ErrConflict) || ctx.Err() != nil {
			t.Fatalf("%s after the race: %v", what, err)
		}
	}
	before := c.writes.Load()
	if err := op(); err != nil {
		t.Fatalf("%s again: %v", what, err)
	}
	if n := c.writes.Load() - before; n != 0 {
		t.Fatalf("%s again: %d write transactions, want none", what, n)
	}
}

func racePod(i int) PodPortSpec {
	return PodPortSpec{Switch: "ovn-default", Name: fmt.Sprintf("race-%d.default", i),
		MAC: net.HardwareAddr{0x0a, 0x58, 0x0a, 0x2a, 0x01, byte(i)},
		IPs: []netip.Addr{netip.AddrFrom4([4]byte{10, 42, 1, byte(i + 2)})}, Owner: fmt.Sprintf("default/race-%d", i)}
}

func TestTwoClientsRacingEnsurePodPort(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	clients := []*Client{f.c, connectAnother(t, f)}
	checkRaceErrors(t, race(clients, func(c *Client, i int) error { return c.EnsurePodPort(f.ctx, racePod(i)) }))
	for _, c := range clients {
		for i := range raceRounds {
			settle(t, f.ctx, c, "ensure "+racePod(i).Name, func() error { return c.EnsurePodPort(f.ctx, racePod(i)) })
		}
	}
	db := snapshot(t, connectAnother(t, f))
	sw := db.switchNamed(t, "ovn-default")
	for i := range raceRounds {
		spec := racePod(i)
		lsp := db.onePort(t, spec.Name)
		if got := db.holders[lsp.UUID]; len(got) != 1 || got[0] != sw.UUID {
			t.Errorf("port %s held by switches %v, want only ovn-default", spec.Name, got)
		}
		if len(lsp.Addresses) != 1 || lsp.Addresses[0] != spec.addresses() || !ovn.HasAll(lsp.ExternalIDs, spec.externalIDs()) {
			t.Errorf("port %s half-written: addresses %v, external_ids %v", spec.Name, lsp.Addresses, lsp.ExternalIDs)
		}
	}
}

func raceSubnet(i int) SubnetSpec {
	return SubnetSpec{Name: fmt.Sprintf("race-%d", i), Router: "ovn-cluster",
		CIDR:    netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 100, byte(i), 0}), 24),
		Gateway: netip.AddrFrom4([4]byte{10, 100, byte(i), 1})}
}

func TestTwoClientsRacingEnsureSubnet(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "ensure cluster", func() error { return f.c.EnsureCluster(f.ctx, DefaultClusterSpec()) })
	clients := []*Client{f.c, connectAnother(t, f)}
	checkRaceErrors(t, race(clients, func(c *Client, i int) error { return c.EnsureSubnet(f.ctx, raceSubnet(i)) }))
	for _, c := range clients {
		for i := range raceRounds {
			settle(t, f.ctx, c, "ensure subnet "+raceSubnet(i).Name, func() error { return c.EnsureSubnet(f.ctx, raceSubnet(i)) })
		}
	}
	db := snapshot(t, connectAnother(t, f))
	router := db.routerNamed(t, "ovn-cluster")
	for i := range raceRounds {
		spec := raceSubnet(i)
		a := spec.attachment()
		sw := db.switchNamed(t, spec.Name)
		lsp := db.onePort(t, a.switchPortName())
		if got := db.holders[lsp.UUID]; len(got) != 1 || got[0] != sw.UUID {
			t.Errorf("switch port %s held by switches %v, want only %s", lsp.Name, got, spec.Name)
		}
		lrp := db.oneRouterPort(t, a.routerPortName())
		if n := count(router.Ports, lrp.UUID); n != 1 {
			t.Errorf("router holds router port %s %d times, want once", lrp.Name, n)
		}
		if want := a.routerPortRow().Networks[0]; len(lrp.Networks) != 1 || lrp.Networks[0] != want {
			t.Errorf("router port %s networks %v, want [%s]", lrp.Name, lrp.Networks, want)
		}
	}
	if want := raceRounds + 1; len(router.Ports) != want {
		t.Errorf("router has %d ports, want %d (join and one per subnet)", len(router.Ports), want)
	}
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

// nbSnapshot is what a fresh client's cache holds: the server's state after the race.
type nbSnapshot struct {
	switches    []*nbdb.LogicalSwitch
	routers     []*nbdb.LogicalRouter
	ports       []*nbdb.LogicalSwitchPort
	routerPorts []*nbdb.LogicalRouterPort
	holders     map[string][]string // switch port UUID -> UUIDs of the switches holding it
}

func snapshot(t *testing.T, c *Client) nbSnapshot {
	t.Helper()
	ctx := context.Background()
	var s nbSnapshot
	for _, list := range []any{&s.switches, &s.routers, &s.ports, &s.routerPorts} {
		if err := c.nb.List(ctx, list); err != nil {
			t.Fatalf("list: %v", err)
		}
	}
	s.holders = make(map[string][]string)
	for _, sw := range s.switches {
		for _, p := range sw.Ports {
			s.holders[p] = append(s.holders[p], sw.UUID)
		}
	}
	return s
}

func exactlyOne[T any](t *testing.T, rows []*T, what, name string, named func(*T) bool) *T {
	t.Helper()
	var found []*T
	for _, r := range rows {
		if named(r) {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s rows named %s, want exactly one", len(found), what, name)
	}
	return found[0]
}

func (s nbSnapshot) switchNamed(t *testing.T, name string) *nbdb.LogicalSwitch {
	t.Helper()
	return exactlyOne(t, s.switches, "Logical_Switch", name, func(r *nbdb.LogicalSwitch) bool { return r.Name == name })
}

func (s nbSnapshot) routerNamed(t *testing.T, name string) *nbdb.LogicalRouter {
	t.Helper()
	return exactlyOne(t, s.routers, "Logical_Router", name, func(r *nbdb.LogicalRouter) bool { return r.Name == name })
}

func (s nbSnapshot) onePort(t *testing.T, name string) *nbdb.LogicalSwitchPort {
	t.Helper()
	return exactlyOne(t, s.ports, "Logical_Switch_Port", name, func(r *nbdb.LogicalSwitchPort) bool { return r.Name == name })
}

func (s nbSnapshot) oneRouterPort(t *testing.T, name string) *nbdb.LogicalRouterPort {
	t.Helper()
	return exactlyOne(t, s.routerPorts, "Logical_Router_Port", name, func(r *nbdb.LogicalRouterPort) bool { return r.Name == name })
}
