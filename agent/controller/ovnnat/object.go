package ovnnat

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Reasons in the objects' conditions and Events.
const (
	ReasonReady        = "Ready"
	ReasonInvalidSpec  = "InvalidSpec"
	ReasonEipNotFound  = "EipNotFound"
	ReasonEipInUse     = "EipInUse"
	ReasonIPNotFound   = "IPNotFound"
	ReasonVpcMismatch  = "VpcMismatch"
	ReasonNoExternal   = "VpcNotExternal"
	ReasonExternalNet  = "ExternalSubnetInvalid"
	ReasonNoGateway    = "NoGatewayNode"
	ReasonAddressTaken = "AddressUnavailable"
	ReasonApplyError   = "ApplyFailed"
)

// refusal is a spec edgeovn will not apply as it stands: reported in the object's conditions
// and a Warning Event naming the field; what was applied before stays.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }

func refuse(reason, format string, args ...any) *refusal {
	return &refusal{reason: reason, err: fmt.Errorf(format, args...)}
}

// get returns the object of kind called name from the cache, nil when there is none.
func (c *Controller) get(kind, name string) (*unstructured.Unstructured, error) {
	obj, err := c.lister(kind).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", kind, name, err)
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u, nil
}

// live returns kind's object name to sync, with the finalizer on it. An object that is gone
// or being deleted has its rows removed (remove) and its finalizer taken off, and live
// returns nil: nothing is left to sync.
func (c *Controller) live(ctx context.Context, kind, name string, remove func(context.Context) error) (*unstructured.Unstructured, error) {
	u, err := c.get(kind, name)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, remove(ctx)
	}
	if u.GetDeletionTimestamp() != nil {
		if err := remove(ctx); err != nil {
			return nil, err
		}
		return nil, c.setFinalizer(ctx, kind, u, false)
	}
	if err := c.setFinalizer(ctx, kind, u, true); err != nil {
		return nil, err
	}
	return u, nil
}

// liveAs is live with the object read into T: nil when there is nothing to sync.
func liveAs[T any](ctx context.Context, c *Controller, kind, name string, remove func(context.Context) error) (*unstructured.Unstructured, *T, error) {
	u, err := c.live(ctx, kind, name, remove)
	if u == nil || err != nil {
		return nil, nil, err
	}
	var obj T
	if err := kubeovn.FromObject(u, &obj); err != nil {
		return nil, nil, err
	}
	return u, &obj, nil
}

// ownedRows is live's remove for an object whose rows carry its owner tag.
func (c *Controller) ownedRows(owner northbound.OwnerRef) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := c.req.NB.DeleteOwned(ctx, owner)
		return err
	}
}

// writer writes kind's finalizer and status.
func (c *Controller) writer(kind string) kubeovn.Writer {
	return kubeovn.Writer{Dynamic: c.req.Dynamic, Resource: kinds[kind], Kind: kind, Finalizer: Finalizer}
}

// setFinalizer adds or removes Finalizer (an object already gone has none to remove).
func (c *Controller) setFinalizer(ctx context.Context, kind string, u *unstructured.Unstructured, want bool) error {
	if err := c.writer(kind).SetFinalizer(ctx, u, want); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// setConditions sets Validated, Ready and Error from ref (nil: applied) and says whether a
// condition changed.
func setConditions(conds *[]kubeovn.Condition, ref *refusal) bool {
	now := metav1.Now()
	changed := false
	set := func(t, status, reason, msg string) {
		changed = kubeovn.SetNatCondition(conds, t, status, reason, msg, now) || changed
	}
	if ref == nil {
		kubeovn.SetApplied(set, ReasonReady, ReasonReady)
	} else {
		kubeovn.SetRefused(set, ref.reason, ref.Error(), "not applied (what was applied before stays)")
	}
	return changed
}

// natStatus is a NAT object's status (*kubeovn.OvnFipStatus, ...): its conditions and ready.
type natStatus[S any] interface {
	*S
	Common() (*[]kubeovn.Condition, *bool)
}

// applyIf runs write when the spec was accepted (ref nil); a failed write is the refusal.
func applyIf(ref *refusal, write func() error) *refusal {
	if ref != nil {
		return ref
	}
	if err := write(); err != nil {
		return refuse(ReasonApplyError, "%v", err)
	}
	return nil
}

// finish is every NAT object's status tail: after (before with the fields the sync filled)
// gets Validated, Ready and Error from ref and ready = ref == nil, and is written when it
// differs from before (writeStatus).
func finish[S any, P natStatus[S]](ctx context.Context, c *Controller, kind string, u *unstructured.Unstructured, before, after S, ref *refusal) error {
	conds, ready := P(&after).Common()
	*conds = slices.Clone(*conds) // before's stay as they were, to compare
	changed := setConditions(conds, ref)
	*ready = ref == nil
	return c.writeStatus(ctx, kind, u, before, after, ref, changed)
}

// writeStatus patches the object's status to after when it differs from before, and sends
// the refusal's Warning Event when its conditions changed.
func (c *Controller) writeStatus(ctx context.Context, kind string, u *unstructured.Unstructured, before, after any, ref *refusal, condChanged bool) error {
	if ref != nil && condChanged && c.req.Events != nil {
		c.req.Events.Event(u, corev1.EventTypeWarning, ref.reason, ref.Error())
	}
	if err := c.writer(kind).UpdateStatus(ctx, u.GetName(), before, after); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
