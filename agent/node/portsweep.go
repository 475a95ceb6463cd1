package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// portSweep removes the pod ports on br-int whose host-side veth is gone: a pod's network
// namespace destroyed without a CNI DEL (a runtime crash, a node rebooted by hand), which
// takes the veth pair with it and leaves OVS a port with no device. A port is removed only
// when two checks in a row found its device gone, so a DEL that removes the device and then
// the port is never raced; an ADD makes the device before the port, so it is never touched.
//
// The sweep never removes a pod's only live binding: an ADD deletes every other port that
// carries its logical port's iface-id in the transaction that adds its own (vswitch.AddPort),
// so a port whose device is gone never shares an iface-id with a live one. Before that rule
// (issue 29), a pod re-created after a reboot got its new port beside the stale one,
// ovn-controller bound the new one, and this sweep's removal of the stale one made
// ovn-controller release the logical port for good.
type portSweep struct {
	gone map[string]bool // ports whose device the previous check did not find
}

// deviceGone reports whether the kernel has no network device of that name.
func deviceGone(name string) bool {
	_, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	return errors.As(err, &notFound)
}

// sweep checks every edgeovn pod port once and removes those gone twice in a row; it returns
// how many it removed. gone says whether a device is missing (netlink in production).
func (s *portSweep) sweep(ctx context.Context, ovs *vswitch.Client, gone func(string) bool) (int, error) {
	ports, err := ovs.Ports(ctx, Bridge)
	if err != nil {
		return 0, fmt.Errorf("list pod ports: %w", err)
	}
	now := map[string]bool{}
	for _, p := range ports {
		if gone(p.Name) {
			now[p.Name] = true
		}
	}
	prev := s.gone
	s.gone = now
	doomed := 0
	for name := range now {
		if prev[name] {
			doomed++
		}
	}
	if doomed == 0 {
		return 0, nil
	}
	return ovs.GC(ctx, Bridge, func(p vswitch.Port) bool { return !(now[p.Name] && prev[p.Name]) })
}

// repairPorts runs the sweep and logs what it removed.
func (r *Role) repairPorts(ctx context.Context, log *slog.Logger) error {
	n, err := r.host.ports.sweep(ctx, r.ovs, deviceGone)
	if n > 0 {
		log.Warn("repaired: removed pod ports whose device is gone (pod network removed without a CNI DEL)", "bridge", Bridge, "ports", n)
		err = errors.Join(err, r.retainHostPorts(ctx, log))
	}
	return err
}
