package inspect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// Lease is who holds the controller Lease.
type Lease struct {
	Holder  string
	Renewed time.Time
	Expired bool // not renewed within its duration: nobody leads right now
}

// lease reads the controller Lease.
func (h *Host) lease(ctx context.Context) (Lease, error) {
	kube, err := h.Kube()
	if err != nil {
		return Lease{}, err
	}
	l, err := kube.Leases(h.Cfg.LeaseNamespace).Get(ctx, h.Cfg.LeaseName, metav1.GetOptions{})
	if err != nil {
		return Lease{}, fmt.Errorf("read lease %s/%s: %w", h.Cfg.LeaseNamespace, h.Cfg.LeaseName, err)
	}
	var out Lease
	if l.Spec.HolderIdentity != nil {
		out.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		out.Renewed = l.Spec.RenewTime.Time
	}
	d := h.Cfg.LeaseDuration
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	out.Expired = out.Holder == "" || time.Since(out.Renewed) > d
	return out, nil
}

func (h *Host) checkKube(ctx context.Context) Result {
	l, err := h.lease(ctx)
	if err != nil {
		return fail("check the kubeconfig ("+h.Cfg.Kubeconfig+") and that the API server runs; the node role works without it, new pods do not",
			"%v", err)
	}
	if l.Expired {
		return fail("check edgeovn on the hosts (journalctl -u edgeovn): a host that reaches NB and the API should hold the Lease",
			"the controller Lease %s/%s is not held (last holder %q)", h.Cfg.LeaseNamespace, h.Cfg.LeaseName, l.Holder)
	}
	return pass("controller Lease held by %s", l.Holder)
}

func (h *Host) checkNB(ctx context.Context) Result {
	nb, err := h.NB(ctx)
	if err != nil {
		return fail("check that ovn-central runs (systemctl status ovn-central) and ovn-nb lists its endpoints",
			"not reachable at %v: %v", h.Cfg.NBEndpoints, err)
	}
	ports, err := nb.PodPorts(ctx)
	if err != nil {
		return fail("check the northbound database", "%v", err)
	}
	return pass("answers at %v, %d pod ports", h.Cfg.NBEndpoints, len(ports))
}

// openIPAM loads the IPAM database read-only; ok is false when this host has none.
func (h *Host) openIPAM(ctx context.Context) (m *ipam.IPAM, closeFn func(), ok bool, err error) {
	if _, err := os.Stat(h.Cfg.IPAMDatabase); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	st, err := sqlitestore.OpenReadOnly(ctx, h.Cfg.IPAMDatabase, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, false, err
	}
	m, err = ipam.New(ctx, st, nil)
	if err != nil {
		st.Close()
		return nil, nil, false, err
	}
	return m, func() { st.Close() }, true, nil
}

// checkAgreement compares this host's IPAM with NB's pod ports, where this host leads: only
// the leader's database is current.
func (h *Host) checkAgreement(ctx context.Context) Result {
	l, err := h.lease(ctx)
	switch {
	case err != nil:
		return skip("cannot tell who leads (%v)", err)
	case l.Holder != h.Cfg.NodeName || l.Expired:
		return skip("the IPAM is kept by the controller on %q: run doctor there", l.Holder)
	}
	m, closeIPAM, ok, err := h.openIPAM(ctx)
	if err != nil {
		return fail("check "+h.Cfg.IPAMDatabase+" (edgeovn moves a damaged one aside and rebuilds it at its next start)", "%v", err)
	}
	if !ok {
		return fail("systemctl restart edgeovn (the controller creates it)", "this host leads but has no IPAM database at %s", h.Cfg.IPAMDatabase)
	}
	defer closeIPAM()
	nb, err := h.NB(ctx)
	if err != nil {
		return skip("northbound not reachable")
	}
	ports, err := nb.PodPorts(ctx)
	if err != nil {
		return fail("check the northbound database", "%v", err)
	}
	if d := disagreements(m.Allocations(), ports); len(d) > 0 {
		return fail("the controller repairs this on its next start (systemctl restart edgeovn on "+h.Cfg.NodeName+"); if it stays, file a bug with this output",
			"%d pods differ: %s", len(d), joinOr(d, ""))
	}
	return pass("%d pod ports, each with its allocation", len(ports))
}
