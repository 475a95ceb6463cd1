package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// LoadBalancerSpec is a load balancer and the switches and routers it is attached to. Its
// name is indexed by the client, as the schema does not make it unique.
type LoadBalancerSpec struct {
	Name     string
	Protocol nbdb.LoadBalancerProtocol // tcp, udp or sctp
	// VIPs maps "ip:port" to its backends ("ip:port,ip:port").
	VIPs map[netip.AddrPort][]netip.AddrPort
	// Templates maps a VIP to the template variable its backends are on each chassis
	// ("^name"); such a load balancer needs options template=true and address-family.
	Templates map[netip.AddrPort]string
	// Options are the row's options (reject, affinity_timeout, ...).
	Options  map[string]string
	Switches []string // edgeovn switches to attach it to
	Routers  []string // edgeovn routers to attach it to
	Owner    OwnerRef
}

// Validate reports what is wrong with the spec.
func (s LoadBalancerSpec) Validate() error {
	if err := validateName("load balancer", s.Name); err != nil {
		return err
	}
	switch s.Protocol {
	case nbdb.LoadBalancerProtocolTCP, nbdb.LoadBalancerProtocolUDP, nbdb.LoadBalancerProtocolSCTP:
	default:
		return fmt.Errorf("%w: load balancer %s: protocol %q, want tcp, udp or sctp", ovn.ErrInvalid, s.Name, s.Protocol)
	}
	for vip, name := range s.Templates {
		if !vip.IsValid() || !matchName.MatchString(name) || s.Options["template"] != "true" {
			return fmt.Errorf("%w: load balancer %s: template VIP %s -> %q needs a valid VIP and name and options:template=true", ovn.ErrInvalid, s.Name, vip, name)
		}
	}
	for vip, backends := range s.VIPs {
		if !vip.IsValid() {
			return fmt.Errorf("%w: load balancer %s: invalid VIP", ovn.ErrInvalid, s.Name)
		}
		for _, b := range backends {
			if !b.IsValid() || b.Addr().Is4() != vip.Addr().Is4() {
				return fmt.Errorf("%w: load balancer %s: VIP %s: backend %q invalid or of the other family", ovn.ErrInvalid, s.Name, vip, b)
			}
		}
	}
	return s.Owner.validate("load balancer " + s.Name)
}

func (s LoadBalancerSpec) vips() map[string]string {
	out := make(map[string]string, len(s.VIPs))
	for vip, backends := range s.VIPs {
		bs := make([]string, len(backends))
		for i, b := range backends {
			bs[i] = b.String()
		}
		slices.Sort(bs)
		out[vip.String()] = strings.Join(bs, ",")
	}
	for vip, name := range s.Templates {
		out[vip.String()] = "^" + name
	}
	return out
}

// EnsureLoadBalancer creates or repairs the load balancer and attaches it to every listed
// switch and router, in one transaction. Attachments to other rows are left alone.
func (c *Client) EnsureLoadBalancer(ctx context.Context, spec LoadBalancerSpec) error {
	ops, err := c.loadBalancerOps(ctx, spec, nil)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure load balancer %s: %w", spec.Name, err)
	}
	return nil
}

func (c *Client) loadBalancerOps(ctx context.Context, spec LoadBalancerSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	ref, ops, err := c.loadBalancerRowOps(ctx, spec, ops)
	if err != nil {
		return nil, err
	}
	return c.attachLoadBalancer(ctx, spec, ref, ops)
}

// loadBalancerRowOps appends the insert of the load balancer, or the update that repairs
// it, and returns its reference (a named UUID when inserted). A row of that name edgeovn
// does not own is ovn.ErrNotOwned.
func (c *Client) loadBalancerRowOps(ctx context.Context, spec LoadBalancerSpec, ops []ovsdb.Operation) (string, []ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return "", nil, err
	}
	cur, err := c.loadBalancerByName(ctx, spec.Name)
	if err != nil {
		return "", nil, err
	}
	proto := spec.Protocol
	want := &nbdb.LoadBalancer{Name: spec.Name, Protocol: &proto, Vips: spec.vips(), Options: maps.Clone(spec.Options),
		ExternalIDs: maps.Clone(spec.Owner.ids())}
	if want.Options == nil {
		want.Options = map[string]string{}
	}
	switch {
	case cur == nil:
		want.UUID = namedUUID("lb", len(ops))
		insert, err := c.nb.Create(want)
		if err != nil {
			return "", nil, fmt.Errorf("build insert of load balancer %s: %w", spec.Name, err)
		}
		return want.UUID, append(append(ops, ovn.WaitAbsent(nbdb.LoadBalancerTable, "name", spec.Name)), insert...), nil
	case !ovn.IsOwned(cur.ExternalIDs):
		return "", nil, fmt.Errorf("load balancer %s: %w", spec.Name, ovn.ErrNotOwned)
	case cur.Protocol == nil || *cur.Protocol != proto || !maps.Equal(cur.Vips, want.Vips) ||
		!maps.Equal(cur.Options, want.Options) || !ovn.HasAll(cur.ExternalIDs, want.ExternalIDs):
		want.UUID = cur.UUID
		want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
		upd, err := c.nb.Where(want).Update(want, &want.Protocol, &want.Vips, &want.Options, &want.ExternalIDs)
		if err != nil {
			return "", nil, fmt.Errorf("build update of load balancer %s: %w", spec.Name, err)
		}
		ops = append(ops, upd...)
	}
	return cur.UUID, ops, nil
}

// attachLoadBalancer appends the mutations that add ref to the load_balancer column of each
// listed switch and router that does not have it yet.
func (c *Client) attachLoadBalancer(ctx context.Context, spec LoadBalancerSpec, ref string, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	for _, name := range spec.Switches {
		ls, err := c.switchByName(ctx, name)
		switch {
		case err != nil:
			return nil, err
		case ls == nil:
			return nil, fmt.Errorf("logical switch %s: %w", name, ovn.ErrNotFound)
		case !ovn.IsOwned(ls.ExternalIDs):
			return nil, fmt.Errorf("logical switch %s: %w", name, ovn.ErrNotOwned)
		case !slices.Contains(ls.LoadBalancer, ref):
			ops = append(ops, ovn.WaitPresent(nbdb.LogicalSwitchTable, ls.UUID, "name", ls.Name),
				ovn.MutateRefs(nbdb.LogicalSwitchTable, ls.UUID, "load_balancer", ovsdb.MutateOperationInsert, ref))
		}
	}
	for _, name := range spec.Routers {
		lr, err := c.ownedRouter(ctx, name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(lr.LoadBalancer, ref) {
			ops = append(ops, ovn.WaitPresent(nbdb.LogicalRouterTable, lr.UUID, "name", lr.Name),
				ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "load_balancer", ovsdb.MutateOperationInsert, ref))
		}
	}
	return ops, nil
}
