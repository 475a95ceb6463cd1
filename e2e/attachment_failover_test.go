package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// attachProviders are the attachments' providers by the interface they are on.
var attachProviders = map[string]string{"net1": "a.default.ovn", "net2": "b.default.ovn"}

// TestAttachmentsFailover: three hosts, each running the controller role's candidate; a pod
// with attachments a and b on each. The Lease holder's edgeovn is SIGKILLed (by PID) and a
// pod with attachments is deleted while no controller runs. Another host takes the Lease,
// with its own IPAM database (not the one that allocated the attachments), and adopts them:
// each live pod's attachment annotations (address, MAC), its attachment ports in northbound
// (the same rows, _uuid, addresses, port security, options and external_ids, not written
// again: _version) and its interfaces are unchanged; the new leader's IPAM holds each
// attachment at its old address and MAC; the deleted pod's attachment ports are removed;
// every pod still reaches every other over each attachment; a pod created while no
// controller runs (its ADD waits for the new leader) and one created after the failover get
// on each attachment an address no other pod holds; and the new leader's /metrics and
// `edgeovn status` count the attachments in their Subnets.
func TestAttachmentsFailover(t *testing.T) {
	ac, ctx := startAttachCluster(t, 3, "af")
	cl := ac.cl
	old := leaderHost(ctx, t, cl)
	var survivors []int
	for i, h := range cl.hosts {
		if h != old {
			survivors = append(survivors, i)
		}
	}
	gone := ac.aes[survivors[0]].runAttached(ctx, t, "af-gone", "a,b")
	ac.pingMatrix(ctx, t, "net1", "net2")
	before := ac.attachState(ctx, t)
	oldIPAM := attachIPAM(old.ipamList(ctx, t))
	for key, st := range before {
		if got := oldIPAM[key]; got != st.alloc {
			t.Fatalf("before the failover: leader's IPAM holds %s as %q, its annotations %q", key, got, st.alloc)
		}
	}

	old.stopDaemon(t)
	if err := ac.aes[survivors[0]].kubelet.DeletePod(ctx, gone.sb.Pod); err != nil {
		t.Fatal(err)
	}
	live := slices.Clone(ac.pods)
	// Created while no controller runs: the new leader finds it with the others, in the
	// order its workqueue takes them; its ADD waits for the new leader's allocation.
	window := ac.run(ctx, t, survivors[1], "af-window")
	next := leaderHost(ctx, t, cl)
	t.Logf("edgeovn on %s (Lease holder) SIGKILLed; the Lease is with %s", old.kubelet.Node, next.kubelet.Node)
	eventually(ctx, t, "af-gone's attachment ports removed by the new leader", func() bool {
		return !next.lspExists(ctx, t, "af-gone.default.a.default.ovn") && !next.lspExists(ctx, t, "af-gone.default.b.default.ovn")
	})
	fresh := ac.run(ctx, t, survivors[0], "af-fresh")
	for ifName, prov := range attachProviders {
		held := map[netip.Addr]string{}
		for _, p := range append(slices.Clone(live), window, fresh) {
			if o, dup := held[p.nets[ifName]]; dup {
				t.Errorf("%s holds %s on %s (%s), which %s holds: allocated twice", ac.where(p), p.nets[ifName], ifName, prov, o)
			}
			held[p.nets[ifName]] = ac.where(p)
		}
	}
	t.Logf("after the failover: af-window %v, af-fresh %v", window.nets, fresh.nets)

	after := ac.attachState(ctx, t)
	newIPAM := attachIPAM(next.ipamList(ctx, t))
	for key, was := range before {
		now, ok := after[key]
		switch {
		case !ok:
			t.Errorf("%s: gone after the failover", key)
		case now.alloc != was.alloc:
			t.Errorf("%s: annotated %q before the failover, %q after", key, was.alloc, now.alloc)
		case now.port != was.port:
			t.Errorf("%s: northbound port was\n  %s\nafter the failover\n  %s", key, was.port, now.port)
		case now.iface != was.iface:
			t.Errorf("%s: interface in the pod was %q, %q after the failover", key, was.iface, now.iface)
		}
		if now.version != was.version {
			t.Errorf("%s: the new leader wrote its northbound port again (_version %s, then %s): a restart changes nothing that is right", key, was.version, now.version)
		}
		if got := newIPAM[key]; got != was.alloc {
			t.Errorf("%s: the new leader's IPAM holds %q, the annotations %q", key, got, was.alloc)
		}
	}
	if !t.Failed() {
		t.Logf("%d attachments adopted unchanged, their northbound rows not written again", len(before))
	}
	checkAttachUsage(ctx, t, next, len(live)+2)
	ac.pingMatrix(ctx, t, "eth0", "net1", "net2")
	if t.Failed() {
		t.Log(next.daemonLog())
	}
}

// checkAttachUsage: the leader's /metrics and `edgeovn status` count want addresses in each
// attachment Subnet.
func checkAttachUsage(ctx context.Context, t *testing.T, leader *env, want int) {
	t.Helper()
	metrics := httpGet(ctx, t, leader, "/metrics")
	out, err := leader.rig.Run(ctx, leader.bin, "status", "--config=/dev/null", "--node-name="+leader.kubelet.Node,
		"--kubeconfig="+leader.rig.Kubeconfig, "--ovn-nb="+leader.rig.NBEndpoint, "--ovn-sb="+leader.rig.SBEndpoint,
		"--ovs-db="+leader.rig.OVSEndpoint, "--ipam-db="+leader.ipamDB)
	if err != nil {
		t.Fatalf("edgeovn status on %s: %v\n%s", leader.kubelet.Node, err, out)
	}
	for _, s := range []struct{ name, cidr string }{{"att-a", "172.17.0.0/24"}, {"att-b", "172.18.0.0/24"}} {
		if m := fmt.Sprintf("edgeovn_ipam_addresses_used{cidr=%q,subnet=%q} %d\n", s.cidr, s.name, want); !strings.Contains(metrics, m) {
			t.Errorf("the leader's /metrics lacks %q", strings.TrimSpace(m))
		}
		found := false
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			found = found || len(f) >= 3 && f[0] == s.name && f[1] == s.cidr && f[2] == fmt.Sprint(want)
		}
		if !found {
			t.Errorf("edgeovn status on the leader: want %s %s used %d:\n%s", s.name, s.cidr, want, out)
		}
	}
}

// attachmentState is what one attachment of one pod is, in each place it is kept.
type attachmentState struct {
	alloc   string // "subnet [addresses] mac" from the pod's annotations
	port    string // its northbound row's columns but _version
	version string // its northbound row's _version
	iface   string // "mac addr/len" of its interface in the pod
}

// attachState reads every attachment of ac's pods, by "namespace/pod provider".
func (ac *attachCluster) attachState(ctx context.Context, t *testing.T) map[string]attachmentState {
	t.Helper()
	rows := ac.portRows(ctx, t)
	out := map[string]attachmentState{}
	for _, p := range ac.pods {
		ann := ac.aes[0].annotatedIfaces(ctx, t, p.sb.Pod.Name, attachProviders)
		ifaces := podIfaces(ctx, t, p.sb)
		for ifName, prov := range attachProviders {
			key := "default/" + p.sb.Pod.Name + " " + prov
			lsp := p.sb.Pod.Name + ".default." + prov
			row, ok := rows[lsp]
			if !ok {
				t.Fatalf("%s: no northbound port %s", key, lsp)
			}
			mac, prefix, _ := strings.Cut(ann[ifName], " ")
			addr := netip.MustParsePrefix(prefix).Addr()
			if !strings.Contains(row.port, mac+" "+addr.String()) {
				t.Fatalf("%s: port %s does not carry the annotated %s %s: %s", key, lsp, mac, addr, row.port)
			}
			out[key] = attachmentState{alloc: fmt.Sprintf("%s [%s] %s", subnetOf(prov), addr, mac),
				port: row.port, version: row.version, iface: ifaces[ifName]}
		}
	}
	return out
}

// subnetOf is the Subnet serving an attachment provider of startAttachEnv.
func subnetOf(provider string) string {
	return "att-" + strings.TrimSuffix(provider, ".default.ovn")
}

type portRow struct{ port, version string }

// portRows selects every logical switch port's row, by name.
func (ac *attachCluster) portRows(ctx context.Context, t *testing.T) map[string]portRow {
	t.Helper()
	cols := []string{"_uuid", "name", "addresses", "port_security", "options", "external_ids", "_version"}
	q := fmt.Sprintf(`["OVN_Northbound",{"op":"select","table":"Logical_Switch_Port","where":[],"columns":%s}]`, mustJSON(t, cols))
	raw := ac.cl.central(ctx, t, "ovsdb-client", "transact", ac.cl.c.Central.NBEndpoint, q)
	var res []struct {
		Rows []map[string]json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil || len(res) != 1 {
		t.Fatalf("select Logical_Switch_Port: %v\n%s", err, raw)
	}
	out := map[string]portRow{}
	for _, r := range res[0].Rows {
		var name string
		_ = json.Unmarshal(r["name"], &name)
		var b strings.Builder
		for _, c := range slices.Sorted(maps.Keys(r)) {
			if c != "_version" {
				fmt.Fprintf(&b, "%s=%s ", c, r[c])
			}
		}
		out[name] = portRow{port: b.String(), version: string(r["_version"])}
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// attachIPAM reads `edgeovn ipam`'s listing into "namespace/pod provider" -> "subnet [addresses] mac"
// for the attachments it holds.
func attachIPAM(list string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasSuffix(f[2], ".ovn") {
			continue
		}
		out[f[1]+" "+f[2]] = fmt.Sprintf("%s %s %s", f[0], f[3], f[4])
	}
	return out
}
