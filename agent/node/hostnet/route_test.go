package hostnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// routeTable is `ip route show table all` of the current namespace, as lines, without
// ovn0's and edgeovn's own routes when mine is false.
func routeTable(t *testing.T, keepOvn0 bool) []string {
	t.Helper()
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").CombinedOutput()
	if err != nil {
		t.Fatalf("ip route: %v: %s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !keepOvn0 && strings.Contains(l, "dev ovn0") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// TestRoutesLeaveOthersAlone: a wanted prefix that is the host's LAN, a static route's prefix,
// or overlaps them is not installed (a *ConflictError names both sides) and the host's routes
// stay as they were, through the wiring, a second wiring, and the wiring without those
// prefixes; the prefixes that do not overlap are installed with RouteProtocol; a route of an
// earlier edgeovn version is adopted; a route on ovn0 edgeovn did not make stays.
func TestRoutesLeaveOthersAlone(t *testing.T) {
	in := setupHost(t)
	spec := testSpec()
	lan, static := netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.128/25")
	legacy, foreign := netip.MustParsePrefix("10.66.0.0/16"), netip.MustParsePrefix("10.99.0.0/16")
	ctx := context.Background()
	in(func() error {
		if err := wireLink(ctx, testSpec(), nil); err != nil {
			t.Fatalf("wire: %v", err)
		}
		ovn0, err := netlinksafe.LinkByName("ovn0")
		if err != nil {
			return err
		}
		// As the previous version installed them: no protocol given (boot).
		if err := netlink.RouteAdd(&netlink.Route{LinkIndex: ovn0.Attrs().Index, Dst: prefixToIPNet(legacy),
			Gw: net.IP(spec.Gateway.AsSlice()), Src: net.IP(spec.Address.Addr().AsSlice())}); err != nil {
			return err
		}
		if err := netlink.RouteAdd(&netlink.Route{LinkIndex: ovn0.Attrs().Index, Dst: prefixToIPNet(foreign),
			Gw: net.ParseIP("100.64.0.9"), Protocol: unix.RTPROT_STATIC}); err != nil {
			return err
		}
		before := routeTable(t, false)
		spec.Routes = append(spec.Routes, lan, static, legacy)
		for range 2 {
			err := wireLink(ctx, spec, nil)
			var c *ConflictError
			if !errors.As(err, &c) || len(c.Conflicts) != 2 || c.Conflicts[0].Dst != lan || c.Conflicts[1].Dst != static {
				t.Fatalf("wire with the LAN and a static route's prefix: want a conflict for both, got %v", err)
			}
			for _, want := range []string{"192.0.2.0/24 dev eth0 proto kernel", "198.51.100.0/24 via 192.0.2.254 dev eth0"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("conflict %q does not name %q", err, want)
				}
			}
			checkHostRoutes(t, before)
			mine := routeTable(t, true)
			for _, want := range []string{"10.42.0.0/16 via 100.64.0.1 dev ovn0 proto 211", "10.66.0.0/16 via 100.64.0.1 dev ovn0 proto 211", "10.99.0.0/16 via 100.64.0.9 dev ovn0 proto static"} {
				if !slices.ContainsFunc(mine, func(l string) bool { return strings.HasPrefix(l, want) }) {
					t.Errorf("no route %q in\n%s", want, strings.Join(mine, "\n"))
				}
			}
		}
		spec.Routes = testSpec().Routes
		if err := wireLink(ctx, spec, nil); err != nil {
			t.Fatalf("wire without them: %v", err)
		}
		checkHostRoutes(t, before)
		mine := strings.Join(routeTable(t, true), "\n")
		if strings.Contains(mine, "10.66.0.0/16") || !strings.Contains(mine, "10.99.0.0/16 via 100.64.0.9 dev ovn0 proto static") {
			t.Errorf("after the wiring without them: want edgeovn's 10.66.0.0/16 gone and the foreign route kept:\n%s", mine)
		}
		// What a clean-up removes: edgeovn's routes, and nothing else.
		owned, err := OwnedRoutes()
		if err != nil {
			return err
		}
		if len(owned) != 1 || owned[0].Text != "10.42.0.0/16 via 100.64.0.1 dev ovn0 proto 211" {
			t.Fatalf("owned routes: %+v", owned)
		}
		if err := DeleteRoute(owned[0]); err != nil {
			return err
		}
		checkHostRoutes(t, before)
		mine = strings.Join(routeTable(t, true), "\n")
		if strings.Contains(mine, "proto 211") || !strings.Contains(mine, "10.99.0.0/16 via 100.64.0.9 dev ovn0 proto static") {
			t.Errorf("after deleting the owned routes:\n%s", mine)
		}
		return nil
	})
}

func checkHostRoutes(t *testing.T, before []string) {
	t.Helper()
	if after := routeTable(t, false); !slices.Equal(after, before) {
		t.Errorf("host routes changed:\n%s\nwere\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}
