package pinger

import (
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Round is one round's outcome, for `edgeovn status`.
type Round struct {
	Start        time.Time
	Took         time.Duration
	Err          string // the round could not run (listing targets, the ICMP socket)
	Targets      []TargetResult
	InternalDNS  DNSResult
	ExternalDNS  *DNSResult
	Inconsistent int
}

// TargetResult is one target's line.
type TargetResult struct {
	Kind string // pod, node, external
	Node string
	IP   netip.Addr
	Result
}

func (r *Round) add(kind, node string, ip netip.Addr, res Result) {
	r.Targets = append(r.Targets, TargetResult{Kind: kind, Node: node, IP: ip, Result: res})
}

// WriteText writes the round for a person: a summary line, then a line per target with loss
// (or every target when verbose).
func (r Round) WriteText(w io.Writer, verbose bool) {
	if r.Start.IsZero() {
		fmt.Fprintln(w, "no round yet")
		return
	}
	if r.Err != "" {
		fmt.Fprintf(w, "round at %s failed: %s\n", r.Start.UTC().Format(time.RFC3339), r.Err)
		return
	}
	sent, lost, lossy := 0, 0, 0
	for _, t := range r.Targets {
		sent += t.Sent
		lost += t.Lost()
		if t.Lost() > 0 {
			lossy++
		}
	}
	dns := "ok"
	if r.InternalDNS.Err != nil {
		dns = r.InternalDNS.Err.Error()
	}
	fmt.Fprintf(w, "round at %s (%v): %d targets, %d/%d requests lost, %d targets with loss; dns %s %s; %d inconsistent port bindings\n",
		r.Start.UTC().Format(time.RFC3339), r.Took.Round(time.Millisecond), len(r.Targets), lost, sent, lossy,
		r.InternalDNS.Name, dns, r.Inconsistent)
	for _, t := range r.Targets {
		if t.Lost() == 0 && !verbose {
			continue
		}
		fmt.Fprintf(w, "  %-8s %-12s %-15s sent %d lost %d rtt %.2fms\n", t.Kind, t.Node, t.IP, t.Sent, t.Lost(), ms(t.RTT))
	}
}
