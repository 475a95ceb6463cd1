package agent

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/agent/controller"
	"github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/agent/node/health"
)

// Router is the cluster's logical router, Kube-OVN's name.
const Router = "ovn-cluster"

// Hooks are the daemon's outward notifications (systemd in production).
type Hooks struct {
	// Health is the node role's readiness monitor; its OnChange tells systemd, its Alive
	// feeds the watchdog. Nil: the node role keeps one of its own.
	Health *health.Monitor
}

// Run runs both roles until ctx ends. cfg must have passed Validate.
func Run(ctx context.Context, cfg Config, hooks Hooks, log *slog.Logger) error {
	kubes := &kubeSource{path: cfg.Kubeconfig, log: log}
	ovnTLS, err := cfg.ovnTLS()
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return node.Run(ctx, node.Request{Kube: kubes.Get, NodeName: cfg.NodeName, OVSEndpoint: cfg.OVSEndpoint,
			SBEndpoint: cfg.SBEndpoint, ClusterCIDR: cfg.ClusterCIDR, ServiceCIDRs: cfg.ServiceCIDRs, Services: cfg.Services, KubeProxy: cfg.KubeProxy, EncapIP: cfg.EncapIP, DatapathType: cfg.DatapathType, MTU: cfg.MTU,
			CNISocket: cfg.CNISocket, CNIConfDir: cfg.CNIConfDir, CNIBinDir: cfg.CNIBinDir,
			CNIBinarySource: cfg.CNIBinarySource, CNITimeout: cfg.CNITimeout, Health: hooks.Health, TLS: ovnTLS,
			Log: log.With("role", "node")})
	})
	g.Go(func() error {
		kube, err := kubes.Get(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		return elect(ctx, election{cfg: cfg, kube: kube, log: log.With("role", "controller"),
			lead: func(ctx context.Context) error { return runController(ctx, cfg, kube, ovnTLS, log) }})
	})
	return g.Wait()
}

// runController retries the controller role while leading: an unreachable NB at boot is a
// wait, not a reason to give up the Lease.
func runController(ctx context.Context, cfg Config, kube kubernetes.Interface, ovnTLS *tls.Config, log *slog.Logger) error {
	log = log.With("role", "controller")
	backoff := time.Second
	for {
		err := controller.Run(ctx, controller.Request{Kube: kube, NBEndpoints: cfg.NBEndpoints,
			IPAMDatabase: cfg.IPAMDatabase, ClusterCIDR: cfg.ClusterCIDR, ClusterGateway: cfg.ClusterGateway,
			JoinCIDR: cfg.JoinCIDR, Router: Router, TLS: ovnTLS, Services: cfg.Services, NetworkPolicy: cfg.NetworkPolicy, Log: log})
		if ctx.Err() != nil {
			return nil
		}
		log.Error("controller role stopped, restarting", "err", err, "after", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}
