package hostnet

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The forwarding sysctls are per network namespace: /proc/sys/net resolves to the namespace
// of the thread that opens it.
const (
	ipForward   = "/proc/sys/net/ipv4/ip_forward"
	ip6Forward  = "/proc/sys/net/ipv6/conf/all/forwarding"
	ip6ConfRoot = "/proc/sys/net/ipv6/conf"
)

// ensureForwarding turns IPv4 forwarding on, and IPv6 forwarding when the spec has an IPv6
// join address, unless on already; writing the sysctl resets per-interface settings the
// kernel derives from it, so it is not rewritten needlessly, and it is never set back.
func ensureForwarding(_ context.Context, spec Spec, log *slog.Logger) error {
	if spec.Address.IsValid() {
		if err := setOnce(ipForward, "ipv4 forwarding", log); err != nil {
			return err
		}
	}
	if !spec.Address6.IsValid() {
		return nil
	}
	on, err := sysctlIs(ip6Forward, "1")
	if err != nil || on {
		return err
	}
	// With forwarding on, the kernel ignores router advertisements on an interface whose
	// accept_ra is 1: a host that learned its default route from them would lose it when
	// the route expires. The host is sacred: such an interface keeps accepting them (2).
	if err := keepAcceptingRA(spec.Interface, log); err != nil {
		return err
	}
	return setOnce(ip6Forward, "ipv6 forwarding", log)
}

// setOnce writes 1 to path unless it holds 1 already.
func setOnce(path, what string, log *slog.Logger) error {
	on, err := sysctlIs(path, "1")
	if err != nil || on {
		return err
	}
	if err := os.WriteFile(path, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("enable %s: %w", what, err)
	}
	log.Info("enabled " + what)
	return nil
}

func sysctlIs(path, want string) (bool, error) {
	cur, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return string(bytes.TrimSpace(cur)) == want, nil
}

// keepAcceptingRA sets accept_ra to 2 on every interface (but own, edgeovn's) whose accept_ra
// is 1 and whose IPv6 default route was learned from a router advertisement (proto ra).
// Nothing else is changed: an interface configured statically keeps its setting.
func keepAcceptingRA(own string, log *slog.Logger) error {
	routes, err := netlinksafe.RouteListFiltered(netlink.FAMILY_V6, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list ipv6 routes: %w", err)
	}
	for _, r := range routes {
		if r.Protocol != unix.RTPROT_RA || (r.Dst != nil && r.Dst.IP.To16() != nil && !r.Dst.IP.IsUnspecified()) {
			continue
		}
		link, err := netlink.LinkByIndex(r.LinkIndex)
		if err != nil || link.Attrs().Name == own {
			continue
		}
		path := filepath.Join(ip6ConfRoot, link.Attrs().Name, "accept_ra")
		if one, err := sysctlIs(path, "1"); err != nil || !one {
			continue
		}
		if err := os.WriteFile(path, []byte("2"), 0o644); err != nil {
			return fmt.Errorf("keep accepting router advertisements on %s: %w", link.Attrs().Name, err)
		}
		log.Info("interface keeps accepting router advertisements with ipv6 forwarding on (accept_ra 2)", "link", link.Attrs().Name)
	}
	return nil
}

// enableIPv6 lets the kernel hold IPv6 on edgeovn's interface, which takes no router
// advertisements: its addresses and routes are edgeovn's.
func enableIPv6(ifname string) error {
	for key, want := range map[string]string{"disable_ipv6": "0", "accept_ra": "0"} {
		path := filepath.Join(ip6ConfRoot, ifname, key)
		if ok, err := sysctlIs(path, want); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			return fmt.Errorf("set %s %s to %s: %w", ifname, key, want, err)
		}
	}
	return nil
}
