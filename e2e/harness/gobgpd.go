package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GoBGPDSpec is a private gobgpd (Debian's gobgpd): run by hand in a network namespace with
// its config in Dir and its API on 127.0.0.1:50051 inside that namespace; never the system
// service. gobgpd installs no kernel routes: its RIB is what a test reads.
type GoBGPDSpec struct {
	Dir    string // a test's t.TempDir()
	Netns  string // where it runs (the site router's)
	Config string // gobgpd's TOML configuration
}

// GoBGPD is a running private gobgpd.
type GoBGPD struct {
	Process *Process
	netns   string
}

const gobgpAPI = "127.0.0.1:50051"

// StartGoBGPD starts gobgpd in spec.Netns as a child of the site's rig (stopped by PID at its
// Close) and returns once its API answers.
func (s *Site) StartGoBGPD(ctx context.Context, spec GoBGPDSpec) (*GoBGPD, error) {
	conf := filepath.Join(spec.Dir, "gobgpd.toml")
	if err := os.WriteFile(conf, []byte(spec.Config), 0o644); err != nil {
		return nil, fmt.Errorf("gobgpd config: %w", err)
	}
	g := &GoBGPD{netns: spec.Netns}
	p, err := s.Switch.spawn(ctx, ProcessSpec{Name: "gobgpd-" + filepath.Base(spec.Dir), Path: "gobgpd", Netns: spec.Netns,
		Args: []string{"-f", conf, "-t", "toml", "--api-hosts", gobgpAPI, "-p", "--pprof-disable"}},
		func(ctx context.Context) error { _, err := g.CLI(ctx, "global"); return err })
	g.Process = p
	return g, err
}

// CLI runs the gobgp command against the instance.
func (g *GoBGPD) CLI(ctx context.Context, args ...string) ([]byte, error) {
	return inNetns(ctx, g.netns, "gobgp", append([]string{"-u", "127.0.0.1", "-p", "50051"}, args...)...)
}

// Routes is gobgpd's IPv4 global RIB: each prefix's paths' next hops.
func (g *GoBGPD) Routes(ctx context.Context) (map[netip.Prefix][]netip.Addr, error) {
	out, err := g.CLI(ctx, "global", "rib", "-a", "ipv4", "-j")
	if err != nil {
		return nil, err
	}
	var rib map[string][]struct {
		Attrs []struct {
			Type    int    `json:"type"`
			NextHop string `json:"nexthop"`
		} `json:"attrs"`
	}
	if err := json.Unmarshal(out, &rib); err != nil {
		return nil, fmt.Errorf("gobgp global rib: %w: %s", err, out)
	}
	routes := map[netip.Prefix][]netip.Addr{}
	for p, paths := range rib {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("gobgp route %q: %w", p, err)
		}
		for _, path := range paths {
			for _, a := range path.Attrs {
				if nh, err := netip.ParseAddr(a.NextHop); a.Type == 3 && err == nil {
					routes[prefix] = append(routes[prefix], nh)
				}
			}
		}
	}
	return routes, nil
}

// Destinations is the number of destinations in gobgpd's IPv4 global RIB (`gobgp global rib
// summary`): cheap to read with thousands of routes.
func (g *GoBGPD) Destinations(ctx context.Context) (int, error) {
	out, err := g.CLI(ctx, "global", "rib", "summary", "-a", "ipv4")
	if err != nil {
		return 0, err
	}
	s := string(out)
	i := strings.Index(s, "Destination: ")
	if i < 0 {
		return 0, fmt.Errorf("gobgp global rib summary: no destination count: %s", out)
	}
	n, err := strconv.Atoi(strings.TrimRight(strings.Fields(s[i+len("Destination: "):])[0], ","))
	if err != nil {
		return 0, fmt.Errorf("gobgp global rib summary: %w: %s", err, out)
	}
	return n, nil
}

// Established says whether gobgpd's session with neighbor is up (`gobgp neighbor`).
func (g *GoBGPD) Established(ctx context.Context, neighbor netip.Addr) (bool, error) {
	out, err := g.CLI(ctx, "neighbor")
	if err != nil {
		return false, err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == neighbor.String() {
			return strings.Contains(l, "Establ"), nil
		}
	}
	return false, nil
}
