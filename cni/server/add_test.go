package server

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/vishvananda/netlink"
)

func TestAddCheckDelThroughBinary(t *testing.T) {
	r := newRig(t, nil)
	podNS := newPodNS(t)
	cid := containerID(1)
	r.pods.set("default", "web", testNetwork(5, "default", "web"))
	list, rt := r.confList("1.1.0"), r.runtimeConf(cid, podNS.Path(), "default", "web")
	ctx := context.Background()

	res, err := r.cni.AddNetworkList(ctx, list, rt)
	if err != nil {
		t.Fatalf("ADD: %v", err)
	}
	cur, err := types100.NewResultFromResult(res)
	if err != nil {
		t.Fatal(err)
	}
	hostIf := podnet.HostIfName(cid)
	if len(cur.Interfaces) != 2 || cur.Interfaces[0].Name != hostIf || cur.Interfaces[1].Sandbox != podNS.Path() ||
		cur.Interfaces[1].Mac != "0a:58:0a:2a:00:05" {
		t.Errorf("ADD interfaces = %v", cur.Interfaces)
	}
	if len(cur.IPs) != 1 || cur.IPs[0].Address.String() != "10.42.0.5/16" || cur.IPs[0].Gateway.String() != "10.42.0.1" {
		t.Errorf("ADD ips = %v", cur.IPs)
	}
	port, ok := r.ports.get(hostIf)
	if !ok || port.IfaceID != "web.default" || port.ExternalIDs[ExtIDContainerID] != cid ||
		port.ExternalIDs[ExtIDPodName] != "web" || port.ExternalIDs[ExtIDPodNetns] != podNS.Path() {
		t.Errorf("port after ADD = %+v (present %v)", port, ok)
	}
	assertPodAddr(t, podNS, netip.MustParsePrefix("10.42.0.5/16"))

	if err := r.cni.CheckNetworkList(ctx, list, rt); err != nil {
		t.Errorf("CHECK after ADD: %v", err)
	}
	for i := range 2 {
		if err := r.cni.DelNetworkList(ctx, list, rt); err != nil {
			t.Errorf("DEL #%d: %v", i+1, err)
		}
	}
	if _, ok := r.ports.get(hostIf); ok {
		t.Errorf("port %s survived DEL", hostIf)
	}
	if _, err := netlink.LinkByName(hostIf); err == nil {
		t.Errorf("veth %s survived DEL", hostIf)
	}
}

func assertPodAddr(t *testing.T, podNS ns.NetNS, want netip.Prefix) {
	t.Helper()
	err := podNS.Do(func(ns.NetNS) error {
		link, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if a.IPNet.String() == want.String() {
				return nil
			}
		}
		t.Errorf("pod eth0 addresses %v lack %s", addrs, want)
		return nil
	})
	if err != nil {
		t.Fatalf("inspect pod netns: %v", err)
	}
}

// TestAddEveryConfigVersion serves each spec version a runtime may configure.
func TestAddEveryConfigVersion(t *testing.T) {
	r := newRig(t, nil)
	for i, v := range []string{"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"} {
		t.Run(v, func(t *testing.T) {
			podNS := newPodNS(t)
			name := "pod" + v
			r.pods.set("default", name, testNetwork(10+i, "default", name))
			list, rt := r.confList(v), r.runtimeConf(containerID(10+i), podNS.Path(), "default", name)
			res, err := r.cni.AddNetworkList(context.Background(), list, rt)
			if err != nil {
				t.Fatalf("ADD: %v", err)
			}
			if res.Version() != v {
				t.Errorf("result version %s, want %s", res.Version(), v)
			}
			cur, err := types100.NewResultFromResult(res)
			if err != nil || len(cur.IPs) != 1 {
				t.Errorf("result %v: %v", res, err)
			}
			if err := r.cni.DelNetworkList(context.Background(), list, rt); err != nil {
				t.Errorf("DEL: %v", err)
			}
		})
	}
}

func TestDelWhenNetnsAndPodAreGone(t *testing.T) {
	r := newRig(t, nil)
	podNS := newPodNS(t)
	cid := containerID(2)
	r.pods.set("default", "gone", testNetwork(6, "default", "gone"))
	list, rt := r.confList("1.1.0"), r.runtimeConf(cid, podNS.Path(), "default", "gone")
	ctx := context.Background()
	if _, err := r.cni.AddNetworkList(ctx, list, rt); err != nil {
		t.Fatalf("ADD: %v", err)
	}
	r.pods.set("default", "gone", PodNetwork{}) // the API forgot the pod; DEL must not care
	calls := r.pods.callCount()
	_ = podNS.Close()
	if err := testutils.UnmountNS(podNS); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := r.cni.DelNetworkList(ctx, list, rt); err != nil {
			t.Errorf("DEL #%d with netns gone: %v", i+1, err)
		}
	}
	if r.pods.callCount() != calls {
		t.Errorf("DEL asked Pods about the pod")
	}
	rt.NetNS = ""
	if err := r.cni.DelNetworkList(ctx, list, rt); err != nil {
		t.Errorf("DEL without netns: %v", err)
	}
}

func TestAddRejectsBadRequests(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	podNS := newPodNS(t)
	r.pods.set("default", "web", testNetwork(7, "default", "web"))
	tests := []struct {
		name  string
		netns string
		pod   string
		want  uint
	}{
		{"missing K8S_POD_NAME", podNS.Path(), "", types.ErrInvalidEnvironmentVariables},
		// Refused at once, not after waiting for an allocation that never comes.
		{"interface name too long", podNS.Path(), "unallocated", types.ErrInvalidEnvironmentVariables},
		{"netns path that does not exist", "/var/run/netns/edgeovn-test-nonexistent", "web", types.ErrInvalidNetNS},
		{"netns path that is not a namespace", "/etc/hostname", "web", types.ErrInvalidNetNS},
		{"pod never allocated", podNS.Path(), "unallocated", types.ErrTryAgainLater},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cid := containerID(20 + i)
			rc := r.runtimeConf(cid, tt.netns, "default", tt.pod)
			if tt.name == "interface name too long" {
				rc.IfName = "eth0123456789abc"
			}
			_, err := r.cni.AddNetworkList(context.Background(), r.confList("1.1.0"), rc)
			if err == nil {
				t.Fatal("ADD succeeded")
			}
			if got := cniCode(t, err); got != tt.want {
				t.Errorf("code %d, want %d (%v)", got, tt.want, err)
			}
			t.Logf("error as the runtime sees it: %v", err)
			if _, ok := r.ports.get(podnet.HostIfName(cid)); ok {
				t.Errorf("failed ADD left a port")
			}
			if _, err := netlink.LinkByName(podnet.HostIfName(cid)); err == nil {
				t.Errorf("failed ADD left a veth")
			}
		})
	}
}

func TestAddRollsBackWhenOVNNeverBinds(t *testing.T) {
	r := newRig(t, nil)
	r.ports.installErr = context.DeadlineExceeded
	podNS := newPodNS(t)
	cid := containerID(3)
	r.pods.set("default", "web", testNetwork(8, "default", "web"))
	_, err := r.cni.AddNetworkList(context.Background(), r.confList("1.1.0"), r.runtimeConf(cid, podNS.Path(), "default", "web"))
	if got := cniCode(t, err); got != types.ErrTryAgainLater {
		t.Errorf("code %d, want %d (%v)", got, types.ErrTryAgainLater, err)
	}
	if _, ok := r.ports.get(podnet.HostIfName(cid)); ok {
		t.Errorf("failed ADD left its port")
	}
	if _, err := netlink.LinkByName(podnet.HostIfName(cid)); err == nil {
		t.Errorf("failed ADD left its veth")
	}
}
