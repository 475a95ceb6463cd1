package inspect

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// Status writes this host's summary to w: who it is, who leads, the databases, readiness and
// the subnets' usage. Each line is read within timeout; what cannot be read says why.
func (h *Host) Status(ctx context.Context, w io.Writer, timeout time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	within := func(f func(context.Context)) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		f(cctx)
	}
	line("node", "%s", h.Cfg.NodeName)
	var leads bool
	within(func(ctx context.Context) {
		l, err := h.lease(ctx)
		switch {
		case err != nil:
			line("role", "node (controller: unknown, %v)", err)
		case l.Expired:
			line("role", "node; nobody holds the controller Lease (last holder %q)", l.Holder)
		case l.Holder == h.Cfg.NodeName:
			leads = true
			line("role", "node and controller (holds Lease %s/%s, renewed %s ago)", h.Cfg.LeaseNamespace, h.Cfg.LeaseName, ago(l.Renewed))
		default:
			line("role", "node; controller on %s (renewed %s ago)", l.Holder, ago(l.Renewed))
		}
	})
	if a := h.Cfg.MetricsAddress; a != "" {
		within(func(ctx context.Context) { line("controller state", "%s", h.controllerState(ctx, a)) })
	}
	within(func(ctx context.Context) { line("readiness", "%s", h.readiness(ctx)) })
	if a := h.Cfg.MetricsAddress; a != "" {
		within(func(ctx context.Context) { line("pinger", "%s", h.pinger(ctx, a)) })
	}
	within(func(ctx context.Context) { line("host routes", "%s", h.hostRoutesLine(ctx)) })
	within(func(ctx context.Context) { line("open_vswitch", "%s", connState(h.OVS(ctx))) })
	within(func(ctx context.Context) { line("ovn northbound", "%s", connState(h.NB(ctx))) })
	within(func(ctx context.Context) { line("ovn southbound", "%s", connState(h.SB(ctx))) })
	if err := tw.Flush(); err != nil {
		return err
	}
	within(func(ctx context.Context) { h.bgp(ctx, w) })
	var err error
	within(func(ctx context.Context) { err = h.subnets(ctx, w, leads) })
	return err
}

// controllerState is the daemon's own account of its part in the election: leader,
// candidate, or ineligible and why (northbound unreachable, API rights missing).
func (h *Host) controllerState(ctx context.Context, address string) string {
	code, body, err := getEndpoint(ctx, address, "/controller")
	if err != nil || code != 200 {
		return fmt.Sprintf("unknown (http://%s/controller: %d %v)", address, code, err)
	}
	return body
}

// readiness is the daemon's own verdict: /readyz when the endpoints are on, else CNI STATUS.
func (h *Host) readiness(ctx context.Context) string {
	if a := h.Cfg.MetricsAddress; a != "" {
		code, body, err := getEndpoint(ctx, a, "/readyz")
		if err == nil {
			if code == 200 {
				return "ready (http://" + a + "/readyz)"
			}
			return "NOT READY: " + body
		}
	}
	if err := cniStatus(ctx, h.Cfg.CNISocket); err != nil {
		return "NOT READY: " + err.Error()
	}
	return "ready (CNI STATUS on " + h.Cfg.CNISocket + ")"
}

func connState[T any](_ T, err error) string {
	if err != nil {
		return "NOT CONNECTED: " + err.Error()
	}
	return "connected"
}

// subnets prints the IPAM's usage: current on the leader, as of its last term elsewhere.
func (h *Host) subnets(ctx context.Context, w io.Writer, leads bool) error {
	m, closeIPAM, ok, err := h.openIPAM(ctx)
	if err != nil {
		return fmt.Errorf("read ipam %s: %w", h.Cfg.IPAMDatabase, err)
	}
	if !ok {
		fmt.Fprintf(w, "\nsubnets: no IPAM database on this host (%s): the controller's host has it\n", h.Cfg.IPAMDatabase)
		return nil
	}
	defer closeIPAM()
	note := ""
	if !leads {
		note = " (as of when this host last led; the controller's host has the current one)"
	}
	fmt.Fprintf(w, "\nsubnets, from %s%s:\n", h.Cfg.IPAMDatabase, note)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBNET\tCIDR\tUSED\tFREE\tCAPACITY")
	for _, u := range m.Usage() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", u.Subnet, u.CIDR, u.Used, count(u.Capacity-float64(u.Used)), count(u.Capacity))
	}
	return tw.Flush()
}

func count(f float64) string {
	if f < 1e15 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return time.Since(t).Round(time.Second).String()
}
