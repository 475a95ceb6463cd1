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

// LoadBalancerSpec is a load balancer, a member of a load balancer group (SyncLoadBalancers).
// Its name is indexed by the client, as the schema does not make it unique.
type LoadBalancerSpec struct {
	Name     string
	Protocol nbdb.LoadBalancerProtocol // tcp, udp or sctp
	// VIPs maps "ip:port" to its backends ("ip:port,ip:port").
	VIPs map[netip.AddrPort][]netip.AddrPort
	// Templates maps a VIP to the template variable its backends are on each chassis
	// ("^name"); such a load balancer needs options template=true and address-family.
	Templates map[netip.AddrPort]string
	// Options are the row's options (reject, affinity_timeout, ...).
	Options map[string]string
	Owner   OwnerRef
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
