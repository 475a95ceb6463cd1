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
	adding  func() // each CNI ADD's start: the soft memory limit steps aside
	log     *slog.Logger
}

// nodeRequest is the node role's request under r.cfg: the one place node.Request is filled
// (TestRoleRequestsFillEveryField fails when a field is left out).
func nodeRequest(r nodeRun) node.Request {
	return node.Request{Kube: r.kubes.Get, Dynamic: r.kubes.Dynamic, Cluster: r.cfg.Cluster, Node: r.cfg.Node,
		TLS: r.tls, Health: r.hooks.Health, Metrics: r.hooks.Metrics, Startup: r.hooks.Startup, Started: r.started,
		BGPReload: r.hooks.BGPReload, AddStarted: r.adding, Log: r.log.With("role", "node")}
}

// controllerRequest is the controller role's request under r.cfg: the one place
// controller.Request is filled (TestRoleRequestsFillEveryField fails when a field is left out).
func controllerRequest(r controllerRun) controller.Request {
	return controller.Request{Kube: r.kube, Dynamic: r.dyn, Cluster: r.cfg.Cluster, Controller: r.cfg.Controller,
		Router: Router, TLS: r.tls, Metrics: r.metrics, Log: r.log}
}
