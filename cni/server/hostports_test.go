package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
	"github.com/vishvananda/netlink"
)

// fakeHostPorts records what the server asks of HostPorts; a mapping to host port 0 is bad
// input, as the real one says.
type fakeHostPorts struct {
	mu      sync.Mutex
	added   []PodHostPorts
	deleted []string
}

var _ HostPorts = (*fakeHostPorts)(nil)

func (f *fakeHostPorts) Check(p PodHostPorts) (string, error) {
	for _, m := range p.Mappings {
		if m.HostPort == 0 {
			return "", fmt.Errorf("%w: hostPort 0", ErrInvalidPortMappings)
		}
	}
	return fmt.Sprintf("record of %d", len(p.Mappings)), nil
}

func (f *fakeHostPorts) Add(_ context.Context, p PodHostPorts) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.added = append(f.added, p)
	return nil
}

func (f *fakeHostPorts) Delete(_ context.Context, cid string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, cid)
	return nil
}

// TestHostPortsThroughBinary: the runtime's portMappings reach the daemon through the plugin
// binary; ADD records them on the pod port and serves them, DEL stops serving them; a bad
// mapping fails the ADD with code 7 before anything is wired.
func TestHostPortsThroughBinary(t *testing.T) {
	hp := &fakeHostPorts{}
	r := newRig(t, func(c *Config) { c.HostPorts = hp })
	podNS := newPodNS(t)
	cid := containerID(7)
	r.pods.set("default", "web", testNetwork(7, "default", "web"))
	list, rt := withPorts(t, r), r.runtimeConf(cid, podNS.Path(), "default", "web")
	rt.CapabilityArgs = map[string]any{"portMappings": []map[string]any{{"hostPort": 18080, "containerPort": 8080, "protocol": "tcp", "hostIP": "10.0.0.1"}}}
	ctx := context.Background()
	if _, err := r.cni.AddNetworkList(ctx, list, rt); err != nil {
		t.Fatalf("ADD: %v", err)
	}
	want := []protocol.PortMapping{{HostPort: 18080, ContainerPort: 8080, Protocol: "tcp", HostIP: "10.0.0.1"}}
	if len(hp.added) != 1 || hp.added[0].ContainerID != cid || !slices.Equal(hp.added[0].Mappings, want) ||
		len(hp.added[0].IPs) != 1 || hp.added[0].IPs[0].String() != "10.42.0.7/16" {
		t.Fatalf("host ports served: %+v", hp.added)
	}
	if port, _ := r.ports.get(podnet.HostIfName(cid)); port.ExternalIDs[ExtIDHostPorts] != "record of 1" {
		t.Fatalf("pod port's record: %+v", port.ExternalIDs)
	}
	if err := r.cni.DelNetworkList(ctx, list, rt); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hp.deleted, []string{cid}) {
		t.Fatalf("DEL stopped serving %v, want %s", hp.deleted, cid)
	}

	bad := containerID(8)
	r.pods.set("default", "bad", testNetwork(8, "default", "bad"))
	rt = r.runtimeConf(bad, newPodNS(t).Path(), "default", "bad")
	rt.CapabilityArgs = map[string]any{"portMappings": []map[string]any{{"hostPort": 0, "containerPort": 8080, "protocol": "tcp"}}}
	_, err := r.cni.AddNetworkList(ctx, list, rt)
	if code := cniCode(t, err); code != types.ErrInvalidNetworkConfig {
		t.Fatalf("ADD with hostPort 0: code %d (%v), want %d", code, err, types.ErrInvalidNetworkConfig)
	}
	if _, ok := r.ports.get(podnet.HostIfName(bad)); ok {
		t.Fatal("a refused ADD left its port")
	}
	if _, err := netlink.LinkByName(podnet.HostIfName(bad)); err == nil {
		t.Fatal("a refused ADD left its veth")
	}
	if len(hp.added) != 1 {
		t.Fatalf("a refused ADD served host ports: %+v", hp.added)
	}
}

// withPorts is the rig's conflist declaring the portMappings capability, as the conflist
// edgeovn writes does (libcni passes the mappings only to a plugin that declares it).
func withPorts(t *testing.T, r *rig) *libcni.NetworkConfigList {
	t.Helper()
	conf := fmt.Sprintf(`{"cniVersion":"1.1.0","name":"edgeovn","plugins":[{"type":"edgeovn","serverSocket":%q,"timeout":"30s","capabilities":{"portMappings":true}}]}`, r.sock)
	list, err := libcni.ConfListFromBytes([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	return list
}
