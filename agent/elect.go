package agent

import (
	"context"
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/edgeovn/edgeovn/agent/metrics"
)

type election struct {
	cfg     Config
	kube    kubernetes.Interface
	log     *slog.Logger
	metrics *metrics.Metrics
	lead    func(ctx context.Context) error
}

// elect campaigns for the controller Lease until ctx ends, running lead while holding it.
// Losing the Lease cancels lead's context and the campaign starts again.
func elect(ctx context.Context, e election) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.cfg.LeaseNamespace, Name: e.cfg.LeaseName},
		Client:     e.kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.cfg.NodeName},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   e.cfg.LeaseDuration,
			RenewDeadline:   e.cfg.RenewDeadline,
			RetryPeriod:     e.cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            e.cfg.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					e.log.Info("acquired controller lease", "lease", e.cfg.LeaseNamespace+"/"+e.cfg.LeaseName)
					e.metrics.SetLeader(true)
					defer e.metrics.SetLeader(false)
					if err := e.lead(ctx); err != nil {
						e.log.Error("controller role failed", "err", err)
					}
				},
				OnStoppedLeading: func() { e.log.Info("controller lease released or lost") },
				OnNewLeader: func(id string) {
					if id != e.cfg.NodeName {
						e.log.Info("controller role held elsewhere", "leader", id)
					}
				},
			},
		})
		if err != nil {
			return fmt.Errorf("configure leader election: %w", err)
		}
		le.Run(ctx)
	}
	return nil
}
