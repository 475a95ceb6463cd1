package agent

import (
	"crypto/tls"
	"log/slog"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/controller"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/node"
)

// nodeRun is what the node role is started with besides Config.
type nodeRun struct {
	cfg     config.Config
	kubes   *kubeapi.Source
	tls     *tls.Config
	hooks   Hooks
	started func()
	log     *slog.Logger
}

// nodeRequest is the node role's request under r.cfg: the one place node.Request is filled
// (TestRoleRequestsFillEveryField fails when a field is left out).
func nodeRequest(r nodeRun) node.Request {
	cfg := r.cfg
	return node.Request{Kube: r.kubes.Get, Dynamic: r.kubes.Dynamic, NodeName: cfg.NodeName, OVSEndpoint: cfg.OVSEndpoint,
		SBEndpoints: cfg.SBEndpoints, ClusterCIDR: cfg.ClusterCIDR, ServiceCIDRs: cfg.ServiceCIDRs, Services: cfg.Services,
		KubeProxy: cfg.KubeProxy, EncapIP: cfg.EncapIP, EncapIPFrom: cfg.EncapIPFrom, DatapathType: cfg.DatapathType, MTU: cfg.MTU,
		CNISocket: cfg.CNISocket, CNIConfDir: cfg.CNIConfDir, CNIBinDir: cfg.CNIBinDir,
		CNIBinarySource: cfg.CNIBinarySource, CNITimeout: cfg.CNITimeout, Health: r.hooks.Health, TLS: r.tls,
		Metrics: r.hooks.Metrics, Startup: r.hooks.Startup, Started: r.started, Log: r.log.With("role", "node")}
}

// controllerRequest is the controller role's request under r.cfg: the one place
// controller.Request is filled (TestRoleRequestsFillEveryField fails when a field is left out).
func controllerRequest(r controllerRun) controller.Request {
	cfg := r.cfg
	return controller.Request{Kube: r.kube, Dynamic: r.dyn, NBEndpoints: cfg.NBEndpoints, SBEndpoints: cfg.SBEndpoints,
		IPAMDatabase: cfg.IPAMDatabase, ClusterCIDR: cfg.ClusterCIDR, ClusterGateway: cfg.ClusterGateway,
		JoinCIDR: cfg.JoinCIDR, ServiceCIDRs: cfg.ServiceCIDRs, Router: Router, Workers: cfg.ControllerWorkers, TLS: r.tls,
		Services: cfg.Services, NetworkPolicy: cfg.NetworkPolicy, Metrics: r.metrics, Log: r.log}
}
