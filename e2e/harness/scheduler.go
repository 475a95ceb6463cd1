package harness

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// schedulerLease is the Lease kube-scheduler takes before it schedules anything.
const schedulerLease = "kube-scheduler"

// StartScheduler starts kube-scheduler in the rig's namespace with leader election (one
// candidate: it wins at once) and no serving port, and waits until it holds its Lease
// kube-system/kube-scheduler, after which it schedules every pending pod.
func (r *Rig) StartScheduler(ctx context.Context) (*Process, error) {
	bin := r.opts.componentPath(Scheduler)
	if err := checkBinary(Scheduler, bin); err != nil {
		return nil, fmt.Errorf("start kube-scheduler: %w", err)
	}
	spec := ProcessSpec{Name: "kube-scheduler", Path: bin, Args: []string{
		"--kubeconfig=" + r.Kubeconfig,
		"--leader-elect=true",
		"--secure-port=0",
	}}
	return r.spawn(ctx, spec, r.schedulerLeaseHeld)
}

// schedulerLeaseHeld is kube-scheduler's readiness check: its Lease has a holder (after a
// reboot, possibly still its dead self until the Lease expires).
func (r *Rig) schedulerLeaseHeld(ctx context.Context) error {
	l, err := r.kube.CoordinationV1().Leases("kube-system").Get(ctx, schedulerLease, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return fmt.Errorf("lease kube-system/%s has no holder yet", schedulerLease)
	}
	return nil
}
