package hostnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// Ports is the part of *vswitch.Client that Ensure uses.
type Ports interface {
	AddPort(ctx context.Context, spec vswitch.PortSpec) error
}

var _ Ports = (*vswitch.Client)(nil)

// Ensure makes the host match spec, idempotently: the internal port on the bridge, then (once
// the kernel interface exists) its MAC, MTU, address and up state, the routes, IPv4 forwarding,
// and the masquerade rules. A second call with the same spec changes nothing. Routes left out
// because a route edgeovn does not own is in the way come back as a *ConflictError once
// everything else is applied.
func Ensure(ctx context.Context, ports Ports, spec Spec, log *slog.Logger) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("wire host interface %s: %w", spec.Interface, err)
	}
	port := vswitch.PortSpec{Bridge: spec.Bridge, Name: spec.Interface, Type: vswitch.PortInternal,
		IfaceID: spec.IfaceID, MAC: spec.MAC, MTU: spec.MTU}
	if err := ports.AddPort(ctx, port); err != nil {
		return fmt.Errorf("wire host interface %s: %w", spec.Interface, err)
	}
	if err := WaitLink(ctx, spec.Interface); err != nil {
		return err
	}
	return wireLink(ctx, spec, log)
}

// wireLink applies everything but the OVS port to the existing link spec.Interface, in the
// calling thread's network namespace.
func wireLink(ctx context.Context, spec Spec, log *slog.Logger) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("wire host interface %s: %w", spec.Interface, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("interface", spec.Interface)
	steps := []func(context.Context, Spec, *slog.Logger) error{
		configureLink, ensureAddress, ensureRoutes, ensureForwarding, ensureMasquerade,
	}
	var conflict *ConflictError
	for _, step := range steps {
		err := step(ctx, spec, log)
		if errors.As(err, &conflict) {
			continue // the rest of the host's wiring does not depend on the routes left out
		}
		if err != nil {
			return err
		}
	}
	if conflict != nil {
		return conflict
	}
	return nil
}
