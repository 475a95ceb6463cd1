package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
)

// diagnose gathers, for a probe that disagrees with the oracle, what tells a person at which
// layer the disagreement lives: whether ovn-controller has caught up with NB (nb_cfg), the
// logical flows of the switch's ACL stages (southbound), an OpenFlow trace of a fresh packet
// of the cell on br-int, the datapath's cached flows for the source port, and the userspace
// conntrack entries between the two pods.
func (w *world) diagnose(ctx context.Context, c cell) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var b strings.Builder
	section := func(title, body string) {
		fmt.Fprintf(&b, "--- %s\n%s\n", title, strings.TrimRight(body, "\n"))
	}
	section("ovn-controller caught up with NB (nb_cfg)", w.hvSync(ctx))
	section("conntrack between "+c.src.ip.String()+" and "+c.dst.ip.String(), w.conntrack(ctx, c))
	section("ofproto/trace of a new "+c.String()+" packet on br-int", w.trace(ctx, c))
	section("datapath flows from "+c.src.key(), w.datapathFlows(ctx, c))
	section("logical flows of the ACL stages", w.aclFlows(ctx))
	return b.String()
}

// run runs a command in the rig and returns its output, or the error in its place.
func (w *world) run(ctx context.Context, name string, args ...string) string {
	out, err := w.env.rig.Run(ctx, name, args...)
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// failed reports whether out is run's error rather than the command's output.
func failed(out string) bool { return strings.HasPrefix(out, "run ") }

// vswitchd runs ovs-appctl against the rig's ovs-vswitchd: the harness names its control
// socket, so ovs-appctl cannot find it by pid file.
func (w *world) vswitchd(ctx context.Context, args ...string) string {
	return w.run(ctx, "ovs-appctl", append([]string{"-t", filepath.Join(w.env.rig.Dir, "ovs-vswitchd.ctl")}, args...)...)
}

// hvSync is `ovn-nbctl --wait=hv sync`: it returns once ovn-controller has installed the
// flows of everything NB held at the call (NB_Global hv_cfg caught up with nb_cfg).
func (w *world) hvSync(ctx context.Context) string {
	begin := time.Now()
	out := w.run(ctx, "ovn-nbctl", "--db="+w.env.rig.NBEndpoint, "--timeout=20", "--wait=hv", "sync")
	cfg := w.run(ctx, "ovn-nbctl", "--db="+w.env.rig.NBEndpoint, "--bare", "--columns=nb_cfg,sb_cfg,hv_cfg", "list", "NB_Global")
	return fmt.Sprintf("%sNB_Global nb_cfg, sb_cfg, hv_cfg: %s (sync took %v)", out,
		strings.Join(strings.Fields(cfg), ", "), time.Since(begin).Round(time.Millisecond))
}

// conntrack lists the datapath's connection entries of the cell's protocol and port between
// its two pods (in either direction, in every zone), at most maxDiagLines of them.
func (w *world) conntrack(ctx context.Context, c cell) string {
	out := w.vswitchd(ctx, "dpctl/dump-conntrack")
	if failed(out) {
		return out
	}
	proto, port := strings.ToLower(string(c.t.proto))+",", fmt.Sprintf("port=%d,", c.t.port)
	return keepLines(out, func(line string) bool {
		return strings.HasPrefix(line, proto) && strings.Contains(line, port) &&
			strings.Contains(line, "="+c.src.ip.String()+",") && strings.Contains(line, "="+c.dst.ip.String()+",")
	})
}

// trace is ofproto/trace of the cell's first packet (conntrack state trk,new at every
// recirculation) from the source pod's port on br-int.
func (w *world) trace(ctx context.Context, c cell) string {
	port := w.bridgePort(ctx, c.src)
	smac, dmac := w.mac(c.src), w.mac(c.dst)
	flow := fmt.Sprintf("in_port=%s,%s,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,nw_ttl=64,tp_src=40000,tp_dst=%d",
		port, strings.ToLower(string(c.t.proto)), smac, dmac, c.src.ip, c.dst.ip, c.t.port)
	return w.vswitchd(ctx, "ofproto/trace", "br-int", flow)
}

// datapathFlows lists the datapath's cached megaflows that enter from the source pod's port
// and name the destination's address (a stale one shows actions that differ from the trace's).
func (w *world) datapathFlows(ctx context.Context, c cell) string {
	port := "in_port(" + w.bridgePort(ctx, c.src) + ")"
	dst := "dst=" + c.dst.ip.String()
	out := w.vswitchd(ctx, "dpif/dump-flows", "-m", "br-int")
	if failed(out) {
		return out
	}
	out = keepLines(out, func(line string) bool {
		return strings.Contains(line, port) && strings.Contains(line, dst)
	})
	return zeroFields.Replace(out)
}

// zeroFields drops the fully wildcarded fields of a megaflow, which only make it long.
var zeroFields = strings.NewReplacer("skb_priority(0/0),", "", "skb_mark(0/0),", "", "ct_label(0/0),", "",
	"dp_hash(0/0),", "", "packet_type(ns=0,id=0),", "")

// maxDiagLines bounds each listing of a diagnosis.
const maxDiagLines = 30

// keepLines returns the lines of out that keep accepts, at most maxDiagLines of them.
func keepLines(out string, keep func(string) bool) string {
	var b strings.Builder
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if !keep(line) {
			continue
		}
		if n++; n <= maxDiagLines {
			b.WriteString(line + "\n")
		}
	}
	if n > maxDiagLines {
		fmt.Fprintf(&b, "(%d more)\n", n-maxDiagLines)
	}
	return b.String()
}

// aclFlows lists the logical flows of the ACL stages (hints, ACLs before and after the load
// balancer, stateful commit) of every switch.
func (w *world) aclFlows(ctx context.Context) string {
	var b strings.Builder
	for _, line := range strings.Split(w.run(ctx, "ovn-sbctl", "--db="+w.env.rig.SBEndpoint, "lflow-list"), "\n") {
		for _, stage := range []string{"(ls_in_acl", "(ls_out_acl", "(ls_in_stateful", "(ls_out_stateful", "Datapath:"} {
			if strings.Contains(line, stage) {
				b.WriteString(line + "\n")
				break
			}
		}
	}
	return b.String()
}

// bridgePort is the name of the pod's interface on br-int (its iface-id is the pod's LSP).
func (w *world) bridgePort(ctx context.Context, p *tpod) string {
	out := w.run(ctx, "ovs-vsctl", "--db="+w.env.rig.OVSEndpoint, "--bare", "--columns=name",
		"find", "Interface", "external_ids:iface-id="+p.name+"."+p.ns)
	return strings.TrimSpace(out)
}

// mac is the pod's eth0 address, read in its network namespace.
func (w *world) mac(p *tpod) string {
	mac := "?"
	_ = w.netns[p.key()].Do(func(ns.NetNS) error {
		if ifc, err := net.InterfaceByName("eth0"); err == nil {
			mac = ifc.HardwareAddr.String()
		}
		return nil
	})
	return mac
}
