package controller

import (
	"net/netip"

	"github.com/edgeovn/edgeovn/agent/controller/ovnnat"
	"github.com/edgeovn/edgeovn/agent/controller/policies"
	"github.com/edgeovn/edgeovn/agent/controller/securitygroups"
	"github.com/edgeovn/edgeovn/agent/controller/services"
	"github.com/edgeovn/edgeovn/agent/controller/vpcs"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

var (
	_ feature = (*services.Controller)(nil)
	_ feature = (*policies.Controller)(nil)
	_ feature = policies.RowsOff{}
	_ feature = (*vpcs.Controller)(nil)
	_ feature = (*securitygroups.Controller)(nil)
	_ feature = (*ovnnat.Controller)(nil)
	_ claimer = (*ovnnat.Controller)(nil)
	_ opener  = (*ovnnat.Controller)(nil)
)

// enabledFeatures returns the parts of the controller role the request turns on.
func (c *Controller) enabledFeatures() []feature {
	var fs []feature
	if c.req.Services {
		reserved := append(subnetcheck.Prefixes("the pod network (cluster-cidr)", c.req.ClusterCIDR),
			subnetcheck.Prefixes("the join network (join-cidr)", c.req.JoinCIDR)...)
		reserved = append(reserved, subnetcheck.Prefixes("the service network (service-cidr)", c.req.ServiceCIDRs...)...)
		pods := []netip.Prefix{c.req.ClusterCIDR}
		if c.req.ClusterCIDRDual.IsValid() {
			pods = append(pods, c.req.ClusterCIDRDual)
		}
		fs = append(fs, services.New(services.Request{NB: c.nb, Log: c.log, Metrics: c.req.Metrics, Reserved: reserved,
			PodNetworks: pods, Events: c.events}))
	}
	pr := policies.Request{NB: c.nb, Events: c.events, Log: c.log, Metrics: c.req.Metrics,
		IPv6: c.req.ClusterCIDR.Addr().Is6() || c.req.ClusterCIDRDual.IsValid(), Lost: c.lost}
	if c.req.NetworkPolicy {
		fs = append(fs, policies.New(pr))
	} else {
		fs = append(fs, policies.Off(pr))
	}
	if c.req.Dynamic != nil {
		fs = append(fs, vpcs.New(vpcs.Request{Dynamic: c.req.Dynamic, NB: c.nb, Events: c.events, Log: c.log, Metrics: c.req.Metrics}))
		fs = append(fs, securitygroups.New(securitygroups.Request{Dynamic: c.req.Dynamic, NB: c.nb, Events: c.events, Log: c.log,
			Metrics: c.req.Metrics, Hosts: c.req.JoinCIDRs(), Lost: c.lost}))
		fs = append(fs, ovnnat.New(ovnnat.Request{Dynamic: c.req.Dynamic, NB: c.nb, IPAM: c.ipam, Events: c.events, Log: c.log, Metrics: c.req.Metrics}))
	}
	return fs
}

// lost says the pod ("namespace/name") lost its annotated address to an older claim.
func (c *Controller) lost(key string) bool {
	_, lost := c.conflicts.Load(key)
	return lost
}
