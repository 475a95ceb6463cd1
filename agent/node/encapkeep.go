package node

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// encapState is the tunnel endpoint as the node role last found it. Readiness reads err: the
// node is not ready while there is no endpoint to give ovn-controller.
type encapState struct {
	sync.Mutex // one sync at a time: the start, the drift loop and the Node watch all sync
	nodeIP     netip.Addr
	err        error  // why there is no endpoint; nil once one is set
	reported   string // the last failure logged, so a lasting one is logged once
}

var errEncapUnknown = fmt.Errorf("%w: not looked for yet", ErrNoEncapIP)

func newEncapState() *encapState { return &encapState{err: errEncapUnknown} }

// ready is the readiness check.
func (e *encapState) ready(context.Context) error {
	e.Lock()
	defer e.Unlock()
	return e.err
}

// syncEncap finds the tunnel endpoint (encap.go) and keeps the Open_vSwitch row's
// ovn-encap-ip on it: written when it differs, so a changed default route or Node address
// moves the chassis's Geneve endpoint (ovn-controller updates its Encap row in the
// southbound). When none is found the node is not ready, saying why, and an unusable value
// already there (a loopback an older version wrote) is removed rather than registered; a
// usable one is left, since the host may still own it.
func (r *Role) syncEncap(ctx context.Context, log *slog.Logger) error {
	r.encap.Lock()
	defer r.encap.Unlock()
	src := encapSource{Fixed: r.req.EncapIP, From: r.req.EncapIPFrom, NodeIP: r.encap.nodeIP}
	var err error
	if !src.Fixed.IsValid() {
		if src, err = readEncapSource(src); err != nil {
			return fmt.Errorf("find encapsulation address: %w", err)
		}
	}
	want, findErr := chooseEncapIP(src)
	cfg, err := r.ovs.OVNConfig(ctx)
	if err != nil {
		return err
	}
	cur := cfg[vswitch.KeyEncapIP]
	if findErr != nil {
		return r.encapMissing(ctx, log, cur, findErr)
	}
	if cur != want.String() || cfg[vswitch.KeyEncapType] != "geneve" {
		if err := r.ovs.SetOVNConfig(ctx, map[string]string{vswitch.KeyEncapType: "geneve", vswitch.KeyEncapIP: want.String()}); err != nil {
			return err
		}
		if cur == "" {
			log.Info("encapsulation address set", "encap_ip", want.String(), "chassis", r.req.NodeName)
		} else {
			log.Warn("encapsulation address changed", "from", cur, "encap_ip", want.String(), "chassis", r.req.NodeName)
		}
	}
	if r.encap.err != nil && r.encap.reported != "" {
		log.Info("encapsulation address found again", "encap_ip", want.String())
	}
	r.encap.err, r.encap.reported = nil, ""
	return nil
}

// encapMissing records why there is no endpoint and removes an unusable one; the caller holds
// the lock.
func (r *Role) encapMissing(ctx context.Context, log *slog.Logger, cur string, why error) error {
	r.encap.err = why
	if a, err := netip.ParseAddr(cur); cur != "" && (err != nil || !usableEncap(a)) {
		if err := r.ovs.UnsetOVNConfig(ctx, vswitch.KeyEncapIP); err != nil {
			return err
		}
		log.Warn("removed an encapsulation address other hosts cannot reach", "encap_ip", cur)
		cur = ""
	}
	if msg := why.Error(); msg != r.encap.reported {
		r.encap.reported = msg
		log.Error("no encapsulation address: node not ready", "err", why, "kept", cur)
	}
	return nil
}

// setNodeIP records the Node's InternalIP; it reports whether it changed.
func (e *encapState) setNodeIP(a netip.Addr) bool {
	e.Lock()
	defer e.Unlock()
	if a == e.nodeIP {
		return false
	}
	e.nodeIP = a
	return true
}
