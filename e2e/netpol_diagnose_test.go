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
// datapath's cached megaflows from the source port, the userspace conntrack entries between
// the two pods, an OpenFlow trace of a new packet of the cell on br-int (a cached megaflow
// whose actions differ from the trace's is stale), and the logical flows of the switches'
// ACL stages (southbound). It changes nothing.
func (w *world) diagnose(ctx context.Context, c cell) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var b strings.Builder
	section := func(title, body string) {
		fmt.Fprintf(&b, "--- %s\n%s\n", title, strings.TrimRight(body, "\n"))
	}
	section("ovn-controller caught up with NB (nb_cfg)", w.cfgState(ctx))
	section("datapath flows from "+c.src.key()+" naming "+c.dst.ip.String(), w.datapathFlows(ctx, c))
	section("conntrack between "+c.src.ip.String()+" and "+c.dst.ip.String(), w.conntrack(ctx, c))
	section("ofproto/trace of a new "+c.String()+" packet on br-int", w.trace(ctx, c))
	section("logical flows of the ACL stages of "+c.src.key()+"'s switch", w.aclFlows(ctx, c))
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

// cfgState says whether ovn-controller has installed what NB holds: NB_Global's nb_cfg
// (edgeovn bumps it after each policy change), sb_cfg (ovn-northd's copy) and hv_cfg (what
// every ovn-controller reports installed), and br-int's ovn-nb-cfg (this host's report, on
// which edgeovn purges the datapath flow cache). It only reads: a bump of its own would
// trigger a purge and change what it is diagnosing.
func (w *world) cfgState(ctx context.Context) string {
	cfg := w.run(ctx, "ovn-nbctl", "--db="+w.env.rig.NBEndpoint, "--bare", "--columns=nb_cfg,sb_cfg,hv_cfg", "list", "NB_Global")
	br := w.run(ctx, "ovs-vsctl", "--db="+w.env.rig.OVSEndpoint, "get", "Bridge", "br-int", "external_ids:ovn-nb-cfg")
	f := strings.Fields(cfg)
	verdict := "unreadable"
	if len(f) == 3 {
		verdict = "caught up"
		if f[0] != f[2] {
			verdict = "NOT caught up"
		}
	}
	return fmt.Sprintf("NB_Global nb_cfg, sb_cfg, hv_cfg: %s (%s); br-int ovn-nb-cfg: %s", strings.Join(f, ", "), verdict, strings.TrimSpace(br))
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
	proto := strings.ToLower(string(c.t.proto)) // its port fields are tcp_dst, udp_dst, sctp_dst
	flow := fmt.Sprintf("in_port=%s,%s,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,nw_ttl=64,%s_src=40000,%s_dst=%d",
		port, proto, smac, dmac, c.src.ip, c.dst.ip, proto, proto, c.t.port)
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
// balancer, stateful commit) of the source pod's switch.
func (w *world) aclFlows(ctx context.Context, c cell) string {
	ls := w.run(ctx, "ovn-nbctl", "--db="+w.env.rig.NBEndpoint, "lsp-get-ls", c.src.name+"."+c.src.ns)
	// lsp-get-ls prints "<uuid> (<name>)".
	name, closed := strings.CutSuffix(strings.TrimSpace(ls), ")")
	_, name, opened := strings.Cut(name, "(")
	if !closed || !opened || failed(ls) {
		return ls
	}
	out := w.run(ctx, "ovn-sbctl", "--db="+w.env.rig.SBEndpoint, "lflow-list", name)
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
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
