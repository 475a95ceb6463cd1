package node

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// driftInterval is how often the node role re-checks its host wiring when no event says
// something changed (an event repairs at once).
const driftInterval = 2 * time.Second

// eventSettle coalesces a burst of events (an `nft flush ruleset` deletes many objects) into
// one check.
const eventSettle = 50 * time.Millisecond

// hostState is what the drift loop keeps right: the host wiring last applied from the Node
// (nil until the controller has given this node its join port), and the CNI files' stamps.
type hostState struct {
	mu       sync.Mutex // one Ensure at a time (hostnet's rule), from the Node loop or the drift loop
	spec     *hostnet.Spec
	files    stamps
	ports    portSweep    // only the drift loop uses it
	bindings bindingWatch // only the drift loop uses it
	// conflicts are the prefixes the wiring left out, and what was last reported of them.
	conflicts conflicts
}

// ensureHost applies spec, as the last one, under the lock.
func (r *Role) ensureHost(ctx context.Context, spec hostnet.Spec, log *slog.Logger) error {
	r.host.mu.Lock()
	defer r.host.mu.Unlock()
	err := hostnet.Ensure(ctx, r.ovs, spec, log)
	var c *hostnet.ConflictError
	switch {
	case errors.As(err, &c):
		// Everything else is applied; what is in the way is not edgeovn's to change.
		r.host.conflicts.routes = c.Conflicts
	case err != nil:
		return err
	default:
		r.host.conflicts.routes = nil
	}
	r.host.spec = &spec
	r.reportConflicts(log)
	return nil
}

// keepWired re-checks br-int, the CNI files and the host wiring every driftInterval and on
// every event that may have changed them (netlink: ovn0 and br-int, addresses and routes;
// nftables changes; the CNI directories), and repairs what differs; each repair is logged
// with cause=drift. What is right is only read.
func (r *Role) keepWired(ctx context.Context) error {
	pokes := make(chan struct{}, 1)
	poke := func() {
		select {
		case pokes <- struct{}{}:
		default:
		}
	}
	stop := r.watchHost(ctx, poke)
	defer stop()
	t := time.NewTicker(driftInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-pokes:
			select { // let the burst end
			case <-ctx.Done():
				return nil
			case <-time.After(eventSettle):
			}
			select {
			case <-pokes:
			default:
			}
		}
		r.repair(ctx)
	}
}

// repair checks everything once; failures are logged and retried at the next check.
func (r *Role) repair(ctx context.Context) {
	log := r.log.With("cause", "drift")
	if err := r.repairBridge(ctx, log); err != nil {
		log.Warn("repair "+Bridge, "err", err)
	}
	if err := r.repairFiles(log); err != nil {
		log.Warn("repair cni files", "err", err)
	}
	if err := r.repairPorts(ctx, log); err != nil && ctx.Err() == nil {
		log.Warn("repair pod ports", "err", err)
	}
	if err := r.repairBindings(ctx, log); err != nil && ctx.Err() == nil {
		log.Warn("repair pod bindings", "err", err)
	}
	if err := r.repairHostPorts(ctx, log); err != nil && ctx.Err() == nil {
		log.Warn("repair host port rules", "err", err)
	}
	if err := r.syncEncap(ctx, r.log); err != nil && ctx.Err() == nil {
		log.Warn("repair encapsulation address", "err", err)
	}
	r.host.mu.Lock()
	spec := r.host.spec
	r.host.mu.Unlock()
	if spec == nil {
		return
	}
	if err := r.ensureHost(ctx, *spec, log); err != nil && ctx.Err() == nil {
		log.Warn("repair host wiring", "err", err)
	}
}

func (r *Role) repairBridge(ctx context.Context, log *slog.Logger) error {
	missing := r.ovs.BridgePresent(ctx, Bridge)
	err := r.ovs.EnsureBridge(ctx, vswitch.BridgeSpec{Name: Bridge, DatapathType: r.datapath, Owner: r.req.NodeName, Adopt: true})
	if err == nil && missing != nil {
		log.Warn("repaired: bridge was missing, created it again", "bridge", Bridge, "was", missing.Error())
	}
	return err
}

// repairFiles rewrites the CNI files when any differs from what edgeovn installed; their
// stamps (inode, size, mode, time) make the common case a few stats.
func (r *Role) repairFiles(log *slog.Logger) error {
	paths := r.filePaths()
	if r.host.files.same(paths) {
		return nil
	}
	w, err := r.installFiles()
	if err != nil {
		return errors.Join(err, r.host.files.take(paths))
	}
	if w.wrote() {
		log.Warn("repaired: cni files differed from what edgeovn installs, rewrote them",
			"conf_written", w.wroteConf, "binary_written", w.wroteBin, "plugins_written", w.plugins)
	}
	if all, err := r.recordPaths(); err == nil {
		r.recordFiles(all)
	}
	return r.host.files.take(paths)
}
