package controller

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// The order in which addresses were released lives in the IPAM database, which is this host's
// alone; so the controller also notes each release on the pod switch in northbound
// (northbound.RecordReleased), and a new leader, on whichever host, imports those notes before
// it allocates anything: an address released recently on the old leader is then not the first
// the new one hands out.

// recordReleased notes in northbound that ips of subnet are being released now. It runs
// before the IPAM release, so a failure retries the whole sync and no release goes unnoted.
func (c *Controller) recordReleased(ctx context.Context, subnet string, ips []netip.Addr) error {
	if len(ips) == 0 || !podnet.IsPodSubnet(subnet) {
		return nil
	}
	now := time.Now()
	recs := make([]northbound.ReleasedAddr, 0, len(ips))
	for _, ip := range ips {
		recs = append(recs, northbound.ReleasedAddr{IP: ip, At: now})
	}
	if err := c.nb.RecordReleased(ctx, subnet, recs); err != nil {
		return fmt.Errorf("note release of %v: %w", ips, err)
	}
	return nil
}

// importReleased brings the releases noted in northbound into the IPAM, for every pod
// subnet: those another leader made, and any this host's database lost.
func (c *Controller) importReleased(ctx context.Context) error {
	for _, subnet := range c.subnets.Names() {
		if !podnet.IsPodSubnet(subnet) {
			continue
		}
		if err := c.importReleasedOf(ctx, subnet); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) importReleasedOf(ctx context.Context, subnet string) error {
	recs, err := c.nb.Released(ctx, subnet)
	if err != nil {
		return err
	}
	in := make([]ipam.Released, 0, len(recs))
	for _, r := range recs {
		in = append(in, ipam.Released{Subnet: subnet, IP: r.IP, At: r.At})
	}
	n, err := c.ipam.ImportReleased(ctx, in)
	if err != nil {
		return fmt.Errorf("import released addresses of %s: %w", subnet, err)
	}
	if n > 0 {
		c.log.Info("release order taken from northbound", "subnet", subnet, "imported", n, "noted", len(recs))
	}
	return nil
}
