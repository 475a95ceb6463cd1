package policies

import (
	"context"
	"errors"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/netpol"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"k8s.io/client-go/tools/cache"
)

// RowsOff is the feature's stand-in when --network-policy=false: its reconcile deletes
// every row edgeovn wrote for policies, so another policy engine is not second-guessed.
type RowsOff struct{ req Request }

// Off is the stand-in of one term (it needs only req's NB and Log).
func Off(req Request) RowsOff { return RowsOff{req: req} }

// Name is the stand-in's name in logs.
func (RowsOff) Name() string { return "network-policy-off" }

// Register registers nothing: the stand-in watches nothing.
func (RowsOff) Register(*kubeapi.Informers) ([]cache.InformerSynced, error) {
	return nil, nil
}

// Reconcile deletes the rows of every policy, namespace and the hosts' set edgeovn wrote.
func (o RowsOff) Reconcile(ctx context.Context) error {
	owners := []northbound.OwnerRef{netpol.HostsOwner}
	for _, kind := range []string{ovn.KindNetworkPolicy, ovn.KindNamespace} {
		names, err := o.req.NB.ACLGroupOwners(ctx, kind)
		if err != nil {
			return err
		}
		for _, n := range names {
			owners = append(owners, northbound.OwnerRef{Kind: kind, Name: n})
		}
	}
	deleted := false
	for _, owner := range owners {
		n, err := o.req.NB.DeleteOwned(ctx, owner)
		if err != nil {
			return err
		}
		if n > 0 {
			deleted = true
			o.req.Log.Info("network policy handling is off: removed edgeovn's rows", "owner", owner.Name, "rows", n)
		}
	}
	if !deleted {
		return nil
	}
	// Flows cached while the rows were in force are purged too (see Controller.announce).
	if err := o.req.NB.BumpNBCfg(ctx); err != nil && !errors.Is(err, ovn.ErrNotFound) {
		return err
	}
	return nil
}

// Run has nothing to do.
func (RowsOff) Run(context.Context) {}
