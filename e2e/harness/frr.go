package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
)

// FRRSpec is a private FRR (Debian's frr 8.4) instance: zebra and bgpd run by hand, as the
// frr user, in a network namespace, with their config, pid files, vty sockets, zserv socket
// and logs in Dir; never the system service.
type FRRSpec struct {
	// Dir holds everything of the instance (a test's t.TempDir()); it and its parent are
	// opened to the frr user.
	Dir string
	// Netns is where it runs (the site router's).
	Netns string
	// BGPConfig is bgpd's configuration (frr.conf syntax: "router bgp ...").
	BGPConfig string
}

// FRR is a running private FRR: zebra installs what bgpd learns into the namespace's kernel
// routes, so devices routed through the namespace reach what is announced.
type FRR struct {
	Dir         string
	netns       string
	Zebra, BGPD *Process
	site        *Rig
}

// StartFRR starts zebra and bgpd in spec.Netns as children of the site's rig (stopped by
// PID at its Close; FRR.Zebra and FRR.BGPD stop one earlier). It returns once vtysh answers.
func (s *Site) StartFRR(ctx context.Context, spec FRRSpec) (*FRR, error) {
	// The frr user must reach Dir (its parent is a test's private directory) and write in it.
	parent, err := os.Stat(filepath.Dir(spec.Dir))
	if err != nil {
		return nil, fmt.Errorf("frr dir: %w", err)
	}
	if err := os.Chmod(filepath.Dir(spec.Dir), parent.Mode()|0o011); err != nil {
		return nil, fmt.Errorf("frr dir: %w", err)
	}
	if err := os.Chmod(spec.Dir, 0o777); err != nil {
		return nil, fmt.Errorf("frr dir: %w", err)
	}
	files := map[string]string{"zebra.conf": "hostname site-zebra\n", "bgpd.conf": "hostname site-bgpd\n" + spec.BGPConfig}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(spec.Dir, name), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("frr config: %w", err)
		}
	}
	f := &FRR{Dir: spec.Dir, netns: spec.Netns, site: s.Switch}
	if f.Zebra, err = f.start(ctx, "zebra", "zebra.vty"); err != nil {
		return nil, err
	}
	if f.BGPD, err = f.start(ctx, "bgpd", "bgpd.vty"); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *FRR) start(ctx context.Context, daemon, vty string) (*Process, error) {
	args := []string{"-f", filepath.Join(f.Dir, daemon+".conf"), "-i", filepath.Join(f.Dir, daemon+".pid"),
		"-z", filepath.Join(f.Dir, "zserv.api"), "--vty_socket", f.Dir, "-u", "frr", "-g", "frr", "-P", "0",
		"--log", "file:" + filepath.Join(f.Dir, daemon+".log"), "--log-level", "debug"}
	spec := ProcessSpec{Name: "frr-" + daemon + "-" + filepath.Base(f.Dir), Path: "/usr/lib/frr/" + daemon, Args: args, Netns: f.netns}
	return f.site.spawn(ctx, spec, func(context.Context) error {
		if _, err := os.Stat(filepath.Join(f.Dir, vty)); err != nil {
			return fmt.Errorf("frr %s: no vty socket yet", daemon)
		}
		return nil
	})
}

// Vtysh runs one vtysh command against the instance.
func (f *FRR) Vtysh(ctx context.Context, command string) ([]byte, error) {
	return inNetns(ctx, f.netns, "vtysh", "--vty_socket", f.Dir, "-c", command)
}

// BGPRoute is one path of FRR's BGP table.
type BGPRoute struct {
	Prefix  netip.Prefix
	NextHop netip.Addr
	Valid   bool
	Best    bool
	Stale   bool
}

// Routes is FRR's IPv4 (or, with v6, IPv6) BGP table: `show ip bgp json`.
func (f *FRR) Routes(ctx context.Context, v6 bool) ([]BGPRoute, error) {
	cmd := "show ip bgp json"
	if v6 {
		cmd = "show bgp ipv6 unicast json"
	}
	out, err := f.Vtysh(ctx, cmd)
	if err != nil {
		return nil, err
	}
	var table struct {
		Routes map[string][]struct {
			Valid    bool `json:"valid"`
			Bestpath bool `json:"bestpath"`
			Stale    bool `json:"stale"`
			Nexthops []struct {
				IP string `json:"ip"`
			} `json:"nexthops"`
		} `json:"routes"`
	}
	if err := json.Unmarshal(out, &table); err != nil {
		return nil, fmt.Errorf("frr %s: %w: %s", cmd, err, out)
	}
	var routes []BGPRoute
	for p, paths := range table.Routes {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("frr route %q: %w", p, err)
		}
		for _, path := range paths {
			r := BGPRoute{Prefix: prefix, Valid: path.Valid, Best: path.Bestpath, Stale: path.Stale}
			if len(path.Nexthops) > 0 {
				r.NextHop, _ = netip.ParseAddr(path.Nexthops[0].IP)
			}
			routes = append(routes, r)
		}
	}
	return routes, nil
}

// PeerState is the state of the session with neighbor as FRR sees it (Established, Active,
// Connect, ...).
func (f *FRR) PeerState(ctx context.Context, neighbor netip.Addr) (string, error) {
	out, err := f.Vtysh(ctx, "show bgp neighbors "+neighbor.String()+" json")
	if err != nil {
		return "", err
	}
	var peers map[string]struct {
		State string `json:"bgpState"`
	}
	if err := json.Unmarshal(out, &peers); err != nil {
		return "", fmt.Errorf("frr neighbor %s: %w: %s", neighbor, err, out)
	}
	return peers[neighbor.String()].State, nil
}

// FRRAvailable says whether Debian's frr is installed.
func FRRAvailable() error {
	for _, p := range []string{"/usr/lib/frr/zebra", "/usr/lib/frr/bgpd"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("frr not installed (apt-get install frr): %w", err)
		}
	}
	_, err := exec.LookPath("vtysh")
	return err
}

// PrefixesFrom is the number of IPv4 unicast prefixes FRR has received from neighbor (`show
// bgp ipv4 unicast summary json`): cheap to read with thousands of routes.
func (f *FRR) PrefixesFrom(ctx context.Context, neighbor netip.Addr) (int, error) {
	out, err := f.Vtysh(ctx, "show bgp ipv4 unicast summary json")
	if err != nil {
		return 0, err
	}
	var sum struct {
		Peers map[string]struct {
			PfxRcd int `json:"pfxRcd"`
		} `json:"peers"`
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return 0, fmt.Errorf("frr summary: %w: %s", err, out)
	}
	return sum.Peers[neighbor.String()].PfxRcd, nil
}
