package northbound

import (
	"context"

	"fmt"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// OwnerRef names the Kubernetes object a row stands for: Kind is one of the ovn.Kind*
// constants, Name its name ("node1", "namespace/name").
type OwnerRef struct {
	Kind string
	Name string
}

func (o OwnerRef) validate(what string) error {
	if o.Kind == "" || o.Name == "" {
		return fmt.Errorf("%w: %s: owner kind and name are required (got %q/%q)", ovn.ErrInvalid, what, o.Kind, o.Name)
	}
	return nil
}

func (o OwnerRef) ids() map[string]string { return ovn.OwnedBy(o.Kind, o.Name) }

// ownedRouter returns the router name, which must exist and be edgeovn's.
func (c *Client) ownedRouter(ctx context.Context, name string) (*nbdb.LogicalRouter, error) {
	lr, err := c.routerByName(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case lr == nil:
		return nil, fmt.Errorf("logical router %s: %w", name, ovn.ErrNotFound)
	case !ovn.IsOwned(lr.ExternalIDs):
		return nil, fmt.Errorf("logical router %s: %w", name, ovn.ErrNotOwned)
	}
	return lr, nil
}
