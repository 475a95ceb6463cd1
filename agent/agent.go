package agent

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/controller"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/leader"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/agent/opsserver"
	"github.com/edgeovn/edgeovn/agent/startup"
)

// Router is the cluster's logical router, Kube-OVN's name.
const Router = "ovn-cluster"

// Hooks are the daemon's outward notifications (systemd in production).
type Hooks struct {
	// Health is the node role's readiness monitor; its OnChange tells systemd, its Alive
	// feeds the watchdog and /healthz, its Check answers /readyz. Nil: one of Run's own.
	Health *health.Monitor
	// Metrics are served on cfg.MetricsAddress; nil: a set of Run's own.
	Metrics *metrics.Metrics
	// Startup receives the node role's start phases; nil: not recorded.
	Startup *startup.Phases
	// BGPReload gives the BGP options read again from the config file (SIGHUP); nil: none.
	BGPReload <-chan config.BGP
}

// Run runs both roles until ctx ends. cfg must have passed Validate.
func Run(ctx context.Context, cfg config.Config, hooks Hooks, log *slog.Logger) error {
	if err := checkHostNetworks(cfg); err != nil {
		return err
	}
	kubes := kubeapi.NewSource(cfg.Kubeconfig, log)
	ovnTLS, err := cfg.OVNTLS()
	if err != nil {
		return err
	}
	if hooks.Health == nil {
		hooks.Health = health.NewMonitor(health.MonitorRequest{Log: log.With("role", "node")})
	}
	if hooks.Metrics == nil {
		hooks.Metrics = metrics.New(log)
	}
	// The controller role's campaign starts after the node role's start (node.AfterStart).
	nodeStarted := make(chan struct{})
	var startedOnce sync.Once
	markStarted := func() { startedOnce.Do(func() { close(nodeStarted) }) }
	g, ctx := errgroup.WithContext(ctx)
	memLimit := newMemoryLimit(int64(cfg.MemoryLimitMiB)<<20, log)
	g.Go(func() error { memLimit.keep(ctx); return nil })
	if cfg.MetricsAddress != "" {
		g.Go(func() error {
			return opsserver.Serve(ctx, opsserver.Request{Address: cfg.MetricsAddress, Metrics: hooks.Metrics.Handler(),
				Alive: hooks.Health.Alive, Ready: hooks.Health.Check, Controller: hooks.Metrics.ControllerState, BGP: hooks.Metrics.BGPStatus, Pinger: hooks.Metrics.PingerReport, Profiling: cfg.Profiling, Log: log})
		})
	}
	g.Go(func() error {
		return node.Run(ctx, nodeRequest(nodeRun{cfg: cfg, kubes: kubes, tls: ovnTLS, hooks: hooks, started: markStarted, adding: memLimit.adding, log: log}))
	})
	g.Go(func() error {
		if !node.AfterStart(ctx, nodeStarted) {
			return nil
		}
		kube, err := kubes.Get(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := kubeapi.WaitServing(ctx, kube, log.With("role", "controller")); err != nil {
			return nil // only ctx's end
		}
		dyn, err := kubes.Dynamic(ctx)
		if err != nil {
			return err
		}
		ckube, err := kubes.Controller(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		clog := log.With("role", "controller")
		return leader.Run(ctx, leader.Request{Config: leaderConfig(cfg), Leases: kube.Leases(cfg.LeaseNamespace),
			Reviews: kube.SelfSubjectAccessReviews(), TLS: ovnTLS, Metrics: hooks.Metrics, Log: clog,
			Lead: func(ctx context.Context) error {
				return runController(ctx, controllerRun{cfg: cfg, kube: ckube, dyn: dyn, tls: ovnTLS, metrics: hooks.Metrics, log: clog})
			}})
	})
	return g.Wait()
}

// controllerRun is what runController starts the role with.
type controllerRun struct {
	cfg     config.Config
	kube    *kubeapi.Client
	dyn     dynamic.Interface
	tls     *tls.Config
	metrics *metrics.Metrics
	log     *slog.Logger
}

// runController runs the controller role for one term. Its error ends the term, and with it
// this host's hold on the Lease: a host whose controller cannot run must not keep every
// other host from taking over.
func runController(ctx context.Context, r controllerRun) error {
	err := controller.Run(ctx, controllerRequest(r))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// checkHostNetworks reads this host's networks and refuses a configuration whose pod or join
// network overlaps one (config.CheckHostNetworks). It only reads; nothing is started or
// changed before it passes.
func checkHostNetworks(cfg config.Config) error {
	networks, err := hostnet.HostNetworks(node.HostInterface)
	if err != nil {
		return fmt.Errorf("check the configuration against this host's networks: %w", err)
	}
	return config.CheckHostNetworks(cfg, networks)
}
