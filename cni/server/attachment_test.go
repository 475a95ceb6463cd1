package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/cni/podnet"
)

// nadConfig is a Kube-OVN NetworkAttachmentDefinition's config as users write it, as Multus
// hands it to the plugin it names ("kube-ovn"), plus edgeovn's socket (the rig's; a node's
// is the default, which the NAD need not name). Kube-OVN's server_socket is ignored.
func (r *rig) nadConfig(name, provider string) *libcni.PluginConfig {
	r.t.Helper()
	conf := fmt.Sprintf(`{"cniVersion":"0.3.1","name":%q,"type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":%q,"serverSocket":%q}`,
		name, provider, r.sock)
	c, err := libcni.NetworkPluginConfFromBytes([]byte(conf))
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// kubeOVNBinDir is a bin dir where the binary is also "kube-ovn", as the node installs it.
func (r *rig) kubeOVNBinDir(bin string) {
	r.t.Helper()
	dir := r.t.TempDir()
	for _, name := range []string{"edgeovn", "kube-ovn"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			r.t.Fatal(err)
		}
	}
	r.cni = libcni.NewCNIConfigWithCacheDir([]string{dir}, r.t.TempDir(), nil)
}

func attachNetwork(n int, provider string) PodNetwork {
	return PodNetwork{
		Switch: "att", Port: "web.default." + provider,
		MAC:      net.HardwareAddr{0x0a, 0x58, 0xac, 0x11, 0x00, byte(n)},
		IPs:      []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 17, 0, byte(n)}), 24)},
		Gateways: []netip.Addr{netip.MustParseAddr("172.17.0.1")}, MTU: 1400, NoDefaultRoute: true,
		Routes: []podnet.Route{{Dst: netip.MustParsePrefix("192.168.0.0/16"), GW: netip.MustParseAddr("172.17.0.254")}},
	}
}

// TestAttachmentAddDel: after the primary ADD, Multus's delegated ADD of a kube-ovn NAD on
// net1 wires one more veth: the attachment's address and MAC, its routes but no default
// route, its own host end bound to "<pod>.<ns>.<provider>". DEL of net1 removes that one
// only; the pod keeps eth0.
func TestAttachmentAddDel(t *testing.T) {
	r := newRig(t, nil)
	r.kubeOVNBinDir(needPlugin(t))
	podNS := newPodNS(t)
	cid := containerID(7)
	const prov = "a.default.ovn"
	r.pods.set("default", "web", testNetwork(5, "default", "web"))
	r.pods.setAttachment("default", "web", prov, attachNetwork(9, prov))
	ctx := context.Background()
	primary, rt := r.confList("1.1.0"), r.runtimeConf(cid, podNS.Path(), "default", "web")
	if _, err := r.cni.AddNetworkList(ctx, primary, rt); err != nil {
		t.Fatalf("primary ADD: %v", err)
	}
	nad, art := r.nadConfig("a", prov), *rt
	art.IfName = "net1"
	res, err := r.cni.AddNetwork(ctx, nad, &art)
	if err != nil {
		t.Fatalf("attachment ADD: %v", err)
	}
	cur, err := types100.NewResultFromResult(res)
	if err != nil {
		t.Fatal(err)
	}
	hostIf := podnet.AttachmentHostIfName(cid, "net1")
	if len(cur.IPs) != 1 || cur.IPs[0].Address.String() != "172.17.0.9/24" || len(cur.Routes) != 1 || cur.Routes[0].Dst.String() != "192.168.0.0/16" {
		t.Errorf("attachment ADD result ips %v routes %v", cur.IPs, cur.Routes)
	}
	port, ok := r.ports.get(hostIf)
	if !ok || port.IfaceID != "web.default."+prov || port.ExternalIDs[ExtIDProvider] != prov || port.ExternalIDs[ExtIDIfName] != "net1" {
		t.Errorf("attachment port %s = %+v (present %v)", hostIf, port, ok)
	}
	if _, ok := r.ports.get(podnet.HostIfName(cid)); !ok {
		t.Errorf("primary port gone after the attachment's ADD")
	}
	want := podLinks{"eth0": "0a:58:0a:2a:00:05 10.42.0.5/16", "net1": "0a:58:ac:11:00:09 172.17.0.9/24"}
	if got := readPodLinks(t, podNS); !equalLinks(got.links, want) {
		t.Errorf("pod links %v, want %v", got.links, want)
	}
	if got := readPodLinks(t, podNS).routes; !slices.Equal(got, []string{"0.0.0.0/0 via 10.42.0.1 dev eth0", "192.168.0.0/16 via 172.17.0.254 dev net1"}) {
		t.Errorf("pod routes %q: want the default via eth0 only and net1's own route", got)
	}

	for i := range 2 { // DEL is idempotent
		if err := r.cni.DelNetwork(ctx, nad, &art); err != nil {
			t.Fatalf("attachment DEL #%d: %v", i+1, err)
		}
	}
	if _, ok := r.ports.get(hostIf); ok {
		t.Errorf("attachment port %s survived its DEL", hostIf)
	}
	if _, err := netlink.LinkByName(hostIf); err == nil {
		t.Errorf("attachment veth %s survived its DEL", hostIf)
	}
	if _, ok := r.ports.get(podnet.HostIfName(cid)); !ok {
		t.Errorf("primary port removed by the attachment's DEL")
	}
	if got := readPodLinks(t, podNS); !equalLinks(got.links, podLinks{"eth0": want["eth0"]}) {
		t.Errorf("pod links after the attachment's DEL %v, want eth0 only", got.links)
	}
	if err := r.cni.DelNetworkList(ctx, primary, rt); err != nil {
		t.Fatalf("primary DEL: %v", err)
	}
}

type podLinks map[string]string

type podState struct {
	links  podLinks
	routes []string
}

func equalLinks(a, b podLinks) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// readPodLinks lists the pod's veths ("MAC ADDR") and IPv4 routes ("DST via GW dev IF").
func readPodLinks(t *testing.T, podNS ns.NetNS) podState {
	t.Helper()
	st := podState{links: podLinks{}}
	err := podNS.Do(func(ns.NetNS) error {
		links, err := netlink.LinkList()
		if err != nil {
			return err
		}
		names := map[int]string{}
		for _, l := range links {
			names[l.Attrs().Index] = l.Attrs().Name
			if l.Type() != "veth" {
				continue
			}
			addrs, err := netlink.AddrList(l, netlink.FAMILY_V4)
			if err != nil {
				return err
			}
			var as []string
			for _, a := range addrs {
				as = append(as, a.IPNet.String())
			}
			st.links[l.Attrs().Name] = l.Attrs().HardwareAddr.String() + " " + strings.Join(as, ",")
		}
		routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, rt := range routes {
			if rt.Gw == nil {
				continue // the subnets' own routes
			}
			dst := "0.0.0.0/0"
			if rt.Dst != nil {
				dst = rt.Dst.String()
			}
			st.routes = append(st.routes, fmt.Sprintf("%s via %s dev %s", dst, rt.Gw, names[rt.LinkIndex]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("inspect pod netns: %v", err)
	}
	slices.Sort(st.routes)
	return st
}

// TestAttachmentGC: CNI GC keeps an attachment's port and veth while the runtime lists
// (container, net1) among its valid attachments, and removes them, only them, once it does not.
func TestAttachmentGC(t *testing.T) {
	r := newRig(t, nil)
	r.kubeOVNBinDir(needPlugin(t))
	podNS := newPodNS(t)
	cid := containerID(8)
	const prov = "a.default.ovn"
	r.pods.set("default", "web", testNetwork(6, "default", "web"))
	r.pods.setAttachment("default", "web", prov, attachNetwork(10, prov))
	ctx := context.Background()
	primary, rt := r.confList("1.1.0"), r.runtimeConf(cid, podNS.Path(), "default", "web")
	if _, err := r.cni.AddNetworkList(ctx, primary, rt); err != nil {
		t.Fatalf("primary ADD: %v", err)
	}
	art := *rt
	art.IfName = "net1"
	if _, err := r.cni.AddNetwork(ctx, r.nadConfig("a", prov), &art); err != nil {
		t.Fatalf("attachment ADD: %v", err)
	}
	primaryIf, attachIf := podnet.HostIfName(cid), podnet.AttachmentHostIfName(cid, "net1")
	gc := func(ifNames ...string) {
		var valid []types.GCAttachment
		for _, n := range ifNames {
			valid = append(valid, types.GCAttachment{ContainerID: cid, IfName: n})
		}
		if err := r.cni.GCNetworkList(ctx, primary, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
			t.Fatalf("GC: %v", err)
		}
	}
	present := func() string {
		hostIfs, err := podnet.ListHostIfs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, p := r.ports.get(primaryIf)
		_, a := r.ports.get(attachIf)
		return fmt.Sprintf("ports %v %v veths %v", p, a, hostIfs)
	}
	gc("eth0", "net1")
	if got, want := present(), fmt.Sprintf("ports true true veths [%s %s]", primaryIf, attachIf); got != want && got != fmt.Sprintf("ports true true veths [%s %s]", attachIf, primaryIf) {
		t.Errorf("after GC listing both: %s, want %s", got, want)
	}
	gc("eth0")
	if got, want := present(), fmt.Sprintf("ports true false veths [%s]", primaryIf); got != want {
		t.Errorf("after GC listing eth0 only: %s, want %s", got, want)
	}
}
