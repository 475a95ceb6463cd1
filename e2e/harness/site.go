package harness

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// SiteOptions describes an edge site's LAN for underlay tests.
type SiteOptions struct {
	// VLAN is the tag the site's router and device are on (0: untagged).
	VLAN int
	// Gateway is the site router's address and prefix (192.0.2.1/24), Device the site
	// device's (192.0.2.200/24): a plain host on the LAN, not a pod.
	Gateway, Device netip.Prefix
	// LAN, if set, is the site router's address on the untagged LAN (its eth1, on an access
	// port of VLAN 0): the network the hosts' own eth1 addresses are on.
	LAN netip.Prefix
}

// Site is a site's LAN: a switch, an Open vSwitch bridge "site" (netdev) in a namespace of its
// own with its own ovsdb-server and ovs-vswitchd (this kernel has neither 802.1Q nor bridge VLAN
// filtering, so the switch that understands tags is OVS's userspace one), with a trunk port per
// host (the host's second NIC, eth1, a veth), and access ports on VLAN for the site router
// (RouterNetns, holding Gateway, forwarding) and the site device (DeviceNetns, default route
// via the gateway). Each host's leg on the switch is "leg-<host>" (tcpdump -e there shows the
// tags).
type Site struct {
	Switch      *Rig
	RouterNetns string
	DeviceNetns string
	opts        SiteOptions
}

// SiteNIC is the hosts' NIC on the site's LAN.
const SiteNIC = "eth1"

const siteBridge = "site"

// AddSite builds the site and plugs every host in (their eth1 up, without an address: the
// test gives what it needs). Close stops it with the cluster.
func (c *Cluster) AddSite(ctx context.Context, o SiteOptions) (*Site, error) {
	r, err := c.newMember("site", netip.Addr{})
	if err != nil {
		return nil, err
	}
	s := &Site{Switch: r, RouterNetns: r.Netns + "-rtr", DeviceNetns: r.Netns + "-dev", opts: o}
	c.sites = append(c.sites, s)
	if err := createNetns(ctx, r.Netns); err != nil {
		return s, err
	}
	if err := os.WriteFile(r.path(netnsFile), []byte(r.Netns+"\n"), 0o644); err != nil {
		return s, fmt.Errorf("record netns name: %w", err)
	}
	if err := r.startSwitch(ctx); err != nil {
		return s, err
	}
	if err := s.addEndpoint(ctx, s.RouterNetns, "leg-router", o.Gateway, netip.Addr{}); err != nil {
		return s, err
	}
	if _, err := exec.CommandContext(ctx, "ip", "netns", "exec", s.RouterNetns, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward").CombinedOutput(); err != nil {
		return s, fmt.Errorf("site router forwarding: %w", err)
	}
	if err := s.addEndpoint(ctx, s.DeviceNetns, "leg-device", o.Device, o.Gateway.Addr()); err != nil {
		return s, err
	}
	if o.LAN.IsValid() {
		if err := s.addRouterLAN(ctx); err != nil {
			return s, err
		}
	}
	for _, h := range c.Hosts {
		if err := s.plug(ctx, h); err != nil {
			return s, err
		}
	}
	return s, nil
}

// startSwitch starts the switch's Open vSwitch and its bridge (standalone: a learning switch).
func (r *Rig) startSwitch(ctx context.Context) error {
	if err := r.startOVSDB(ctx, vswitchDB, ""); err != nil {
		return err
	}
	if _, err := r.Run(ctx, "ovs-vsctl", "--db="+r.OVSEndpoint, "--no-wait", "init"); err != nil {
		return fmt.Errorf("initialise the site switch's db: %w", err)
	}
	vswitchd := ProcessSpec{Name: "ovs-vswitchd", Path: "ovs-vswitchd", Args: append([]string{r.OVSEndpoint}, r.daemonFlags("ovs-vswitchd")...)}
	if _, err := r.spawn(ctx, vswitchd, socketAccepts(r.path("ovs-vswitchd.ctl"))); err != nil {
		return err
	}
	_, err := r.Run(ctx, "ovs-vsctl", "--db="+r.OVSEndpoint, "add-br", siteBridge, "--", "set", "bridge", siteBridge, "datapath_type=netdev")
	return err
}

// vsctl runs ovs-vsctl on the switch's database.
func (s *Site) vsctl(ctx context.Context, args ...string) error {
	out, err := s.Switch.Run(ctx, "ovs-vsctl", append([]string{"--db=" + s.Switch.OVSEndpoint}, args...)...)
	if err != nil {
		return fmt.Errorf("site switch: ovs-vsctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// addEndpoint makes a namespace with eth0 (address addr, default route via gw when set) on an
// access port of the site's VLAN.
func (s *Site) addEndpoint(ctx context.Context, ns, leg string, addr netip.Prefix, gw netip.Addr) error {
	if err := createNetns(ctx, ns); err != nil {
		return err
	}
	if err := s.Switch.onClose(func() error { return deleteNetns(ns) }); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", leg,
		"netns", s.Switch.Netns).CombinedOutput(); err != nil {
		return fmt.Errorf("site endpoint %s: %w: %s", ns, err, out)
	}
	steps := [][]string{{"addr", "add", addr.String(), "dev", "eth0"}, {"link", "set", "eth0", "up"}, {"link", "set", "lo", "up"}}
	if gw.IsValid() {
		steps = append(steps, []string{"route", "add", "default", "via", gw.String()})
	}
	if err := ipSteps(ctx, ns, steps); err != nil {
		return err
	}
	if err := ipSteps(ctx, s.Switch.Netns, [][]string{{"link", "set", leg, "up"}}); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tx", "off").CombinedOutput(); err != nil {
		return fmt.Errorf("site endpoint %s: tx offload off: %w: %s", ns, err, out)
	}
	args := []string{"add-port", siteBridge, leg}
	if s.opts.VLAN != 0 {
		args = append(args, "tag="+strconv.Itoa(s.opts.VLAN))
	}
	return s.vsctl(ctx, args...)
}

// AddLANHost adds a namespace, returned, with eth0 at addr on the untagged LAN the hosts'
// eth1 are on: another router or peer beside the site router (a second BGP peer).
func (s *Site) AddLANHost(ctx context.Context, name string, addr netip.Prefix) (string, error) {
	ns, leg := s.Switch.Netns+"-"+name, "leg-"+name
	if err := s.addEndpoint(ctx, ns, leg, addr, netip.Addr{}); err != nil {
		return ns, err
	}
	if s.opts.VLAN != 0 {
		return ns, s.vsctl(ctx, "set", "port", leg, "tag=0")
	}
	return ns, nil
}

// addRouterLAN gives the site router eth1 on the untagged LAN.
func (s *Site) addRouterLAN(ctx context.Context) error {
	if out, err := exec.CommandContext(ctx, "ip", "link", "add", "eth1", "netns", s.RouterNetns, "type", "veth", "peer", "name", "rtr-lan",
		"netns", s.Switch.Netns).CombinedOutput(); err != nil {
		return fmt.Errorf("site router LAN: %w: %s", err, out)
	}
	if err := ipSteps(ctx, s.RouterNetns, [][]string{{"addr", "add", s.opts.LAN.String(), "dev", "eth1"}, {"link", "set", "eth1", "up"}}); err != nil {
		return err
	}
	if err := ipSteps(ctx, s.Switch.Netns, [][]string{{"link", "set", "rtr-lan", "up"}}); err != nil {
		return err
	}
	if _, err := inNetns(ctx, s.RouterNetns, "ethtool", "-K", "eth1", "tx", "off"); err != nil {
		return err
	}
	return s.vsctl(ctx, "add-port", siteBridge, "rtr-lan", "tag=0")
}

// plug gives host h its second NIC eth1, a veth whose other end is a trunk port of the switch.
func (s *Site) plug(ctx context.Context, h *Rig) error {
	leg := "leg-" + h.name()
	if out, err := exec.CommandContext(ctx, "ip", "link", "add", SiteNIC, "netns", h.Netns, "type", "veth", "peer", "name", leg,
		"netns", s.Switch.Netns).CombinedOutput(); err != nil {
		return fmt.Errorf("plug host %s into the site: %w: %s", h.name(), err, out)
	}
	if err := ipSteps(ctx, h.Netns, [][]string{{"link", "set", SiteNIC, "up"}}); err != nil {
		return err
	}
	if _, err := h.Run(ctx, "ethtool", "-K", SiteNIC, "tx", "off"); err != nil {
		return fmt.Errorf("host %s: %w", h.name(), err)
	}
	if err := ipSteps(ctx, s.Switch.Netns, [][]string{{"link", "set", leg, "up"}}); err != nil {
		return err
	}
	return s.vsctl(ctx, "add-port", siteBridge, leg)
}

// Leg is host h's port on the site switch.
func (s *Site) Leg(h *Rig) string { return "leg-" + h.name() }

// InRouter and InDevice run a command in the site router's or device's namespace.
func (s *Site) InRouter(ctx context.Context, name string, args ...string) ([]byte, error) {
	return inNetns(ctx, s.RouterNetns, name, args...)
}

// InDevice runs a command in the site device's namespace.
func (s *Site) InDevice(ctx context.Context, name string, args ...string) ([]byte, error) {
	return inNetns(ctx, s.DeviceNetns, name, args...)
}

func inNetns(ctx context.Context, ns, name string, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s in %s: %w: %s", name, strings.Join(args, " "), ns, err, out)
	}
	return out, nil
}

func (r *Rig) name() string {
	i := strings.LastIndexByte(r.Dir, '/')
	return r.Dir[i+1:]
}

func (c *Cluster) closeSites() error {
	var errs []error
	for i := len(c.sites) - 1; i >= 0; i-- {
		errs = append(errs, c.sites[i].Switch.Close())
	}
	return errors.Join(errs...)
}
