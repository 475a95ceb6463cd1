package podwatch

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/cni/server"
)

// TestWaitAttachment: an attachment's network is read from its provider's annotations, with
// its port "<pod>.<ns>.<provider>", no default route unless default_route says so, and its
// routes; the primary's is not mistaken for it.
func TestWaitAttachment(t *testing.T) {
	const prov = "a.default.ovn"
	k := annotation.KeysFor(prov)
	att := maps.Clone(allocated)
	maps.Copy(att, map[string]string{k.Allocated: "true", k.Routed: "true", k.LogicalSwitch: "att-a",
		k.IPAddress: "172.17.0.5", k.CIDR: "172.17.0.0/24", k.Gateway: "172.17.0.1", k.MACAddress: "0a:58:ac:11:00:05",
		k.Routes: `[{"dst":"192.168.0.0/16","gw":"172.17.0.254"}]`})
	withDefault := maps.Clone(att)
	withDefault[k.DefaultRoute] = "true"
	tests := []struct {
		name     string
		ann      map[string]string
		provider string
		want     string
	}{
		{"primary", att, "", "ovn-default p.default [10.42.0.7/16] default=true routes=[]"},
		{"primary as ovn", att, "ovn", "ovn-default p.default [10.42.0.7/16] default=true routes=[]"},
		{"attachment", att, prov, "att-a p.default.a.default.ovn [172.17.0.5/24] default=false routes=[{192.168.0.0/16 172.17.0.254}]"},
		{"attachment with default_route", withDefault, prov, "att-a p.default.a.default.ovn [172.17.0.5/24] default=true routes=[{192.168.0.0/16 172.17.0.254}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _ := start(t, pod("1", tt.ann))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			n, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-1", Provider: tt.provider})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s %s %v default=%v routes=%v", n.Switch, n.Port, n.IPs, !n.NoDefaultRoute, n.Routes)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	// An attachment not annotated yet waits, even though the primary is.
	w, _ := start(t, pod("1", allocated))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if n, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-1", Provider: prov}); err == nil {
		t.Errorf("attachment not annotated: got %+v, want a wait that ends with the context", n)
	}
}
