package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

func subnetObj(name, cidr string, nat, validated bool) *unstructured.Unstructured {
	status := "False"
	if validated {
		status = "True"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"cidrBlock": cidr, "natOutgoing": nat},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Validated", "status": status}}},
	}}
}

// changeRefused is an applied subnet whose latest change was refused (a bad allowSubnets
// entry): Validated False, Ready True, as the controller reports it.
func changeRefused(name, cidr string) *unstructured.Unstructured {
	u := subnetObj(name, cidr, false, false)
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Validated", "status": "False"},
		map[string]any{"type": "Ready", "status": "True"}}}
	return u
}

// badExclude is an applied subnet whose latest change, an excludeIps entry that does not
// parse, was refused: still Ready, still routed.
func badExclude(name, cidr string) *unstructured.Unstructured {
	u := changeRefused(name, cidr)
	u.Object["spec"].(map[string]any)["excludeIps"] = []any{"10.70.0.x"}
	return u
}

// TestSubnetWiring: validated subnets are routed through ovn0, those with natOutgoing are
// masqueraded, as are applied ones whose latest change was refused (still Ready), join and
// unvalidated ones are neither, and ovn-default's natOutgoing: false
// stops the cluster CIDR's masquerade.
func TestSubnetWiring(t *testing.T) {
	cluster := netip.MustParsePrefix("10.42.0.0/16")
	v := &subnetView{defaultNAT: true}
	v.refresh([]any{
		subnetObj("ovn-default", "10.42.0.0/16", true, true),
		subnetObj("join", "100.64.0.0/16", false, true),
		subnetObj("subnet1", "10.66.0.0/16", true, true),
		subnetObj("plain", "10.67.0.0/16", false, true),
		subnetObj("overlapping", "10.66.1.0/24", true, false),
		subnetObj("dual", "10.68.0.0/16,fd00:68::/64", true, true),
		changeRefused("private", "10.69.0.0/16"),
		badExclude("excluded", "10.70.0.0/16"),
	})
	routes, masq := v.wiring([]netip.Prefix{cluster}, true, false)
	if got, want := fmt.Sprint(routes), "[10.42.0.0/16 10.66.0.0/16 10.67.0.0/16 10.68.0.0/16 10.69.0.0/16 10.70.0.0/16]"; got != want {
		t.Errorf("routes %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(masq), "[10.42.0.0/16 10.66.0.0/16 10.68.0.0/16 fd00:68::/64]"; got != want {
		t.Errorf("masquerade %s, want %s", got, want)
	}
	v.refresh([]any{subnetObj("ovn-default", "10.42.0.0/16", false, true)})
	if _, masq := v.wiring([]netip.Prefix{cluster}, true, false); len(masq) != 0 {
		t.Errorf("ovn-default natOutgoing false: masquerade %v", masq)
	}
	// Dual stack with an IPv6 join address: each family's prefixes are routed.
	v.refresh([]any{subnetObj("ovn-default", "10.42.0.0/16,fd00:42::/64", true, true),
		subnetObj("dual", "10.68.0.0/16,fd00:68::/64", true, true), subnetObj("v6only", "fd00:69::/64", false, true)})
	routes, masq = v.wiring([]netip.Prefix{cluster, netip.MustParsePrefix("fd00:42::/64")}, true, true)
	if got, want := fmt.Sprint(routes, masq), "[10.42.0.0/16 fd00:42::/64 10.68.0.0/16 fd00:68::/64 fd00:69::/64] [10.42.0.0/16 fd00:42::/64 10.68.0.0/16 fd00:68::/64]"; got != want {
		t.Errorf("dual stack: %s, want %s", got, want)
	}
	if routes, _ := v.wiring([]netip.Prefix{netip.MustParsePrefix("fd00:42::/64")}, false, true); fmt.Sprint(routes) != "[fd00:42::/64 fd00:68::/64 fd00:69::/64]" {
		t.Errorf("ipv6 only: routes %v", routes)
	}
	empty := &subnetView{defaultNAT: true}
	if routes, masq := empty.wiring([]netip.Prefix{cluster}, true, false); fmt.Sprint(routes, masq) != "[10.42.0.0/16] [10.42.0.0/16]" {
		t.Errorf("no subnets: %v %v", routes, masq)
	}
}

// TestSubnetIPAMOnly: a Subnet of an IPAM-only provider (macvlan's "<nad>.<namespace>") is
// neither routed into OVN nor masqueraded, and its provider is known to the CNI server's
// check; an attachment Subnet ("<...>.ovn") is routed as before. Before the Subnets are read,
// nothing is checked.
func TestSubnetIPAMOnly(t *testing.T) {
	withProvider := func(u *unstructured.Unstructured, p string) *unstructured.Unstructured {
		u.Object["spec"].(map[string]any)["provider"] = p
		return u
	}
	v := &subnetView{defaultNAT: true}
	if _, checked := v.hasProvider("mv.default"); checked {
		t.Errorf("providers checked before the Subnets were read")
	}
	v.refresh([]any{
		subnetObj("ovn-default", "10.42.0.0/16", true, true),
		withProvider(subnetObj("att", "172.17.0.0/24", true, true), "att.default.ovn"),
		withProvider(subnetObj("mv", "172.19.0.0/24", true, true), "mv.default"),
	})
	routes, masq := v.wiring([]netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}, true, false)
	if got, want := fmt.Sprint(routes, masq), "[10.42.0.0/16 172.17.0.0/24] [10.42.0.0/16 172.17.0.0/24]"; got != want {
		t.Errorf("routes and masquerade %s, want %s (mv's CIDR is macvlan's network)", got, want)
	}
	for p, want := range map[string]bool{"mv.default": true, "att.default.ovn": true, "orphan.default": false} {
		if known, checked := v.hasProvider(p); known != want || !checked {
			t.Errorf("provider %s: known %v checked %v, want %v true", p, known, checked, want)
		}
	}
}

// Until the CRD exists the Subnet informer's lists answer NotFound at every retry: said once,
// at Info, in edgeovn's log; another error is left to client-go's handler.
func TestCRDPendingSaidOnce(t *testing.T) {
	var buf bytes.Buffer
	missing := 0
	h := crdPending(slog.New(slog.NewTextHandler(&buf, nil)), func() { missing++ })
	r := cache.NewNamedReflector("subnets", &cache.ListWatch{}, &unstructured.Unstructured{}, cache.NewStore(cache.MetaNamespaceKeyFunc), 0)
	notFound := fmt.Errorf("failed to list kubeovn.io/v1, Resource=subnets: %w",
		apierrors.NewNotFound(schema.GroupResource{Group: "kubeovn.io", Resource: "subnets"}, ""))
	for range 3 {
		h(context.Background(), r, notFound)
	}
	if missing != 3 {
		t.Errorf("missing called %d times for 3 NotFounds", missing)
	}
	if n := strings.Count(buf.String(), "not served yet"); n != 1 || !strings.Contains(buf.String(), "level=INFO") {
		t.Errorf("NotFound three times logged %d times, want once at Info:\n%s", n, buf.String())
	}
	buf.Reset()
	h(context.Background(), r, errors.New("connection refused"))
	if buf.Len() != 0 || missing != 3 {
		t.Errorf("another error was taken for the missing CRD: %s", buf.String())
	}
}

// Without the CRD the first wiring does not wait out subnetListWait for a list that cannot
// come: the first NotFound ends the wait.
func TestWatchSubnetsWithoutCRD(t *testing.T) {
	defer func(d time.Duration) { subnetListWait = d }(subnetListWait)
	subnetListWait = time.Hour
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kubeovn.SubnetResource: "SubnetList"})
	dyn.PrependReactor("list", "subnets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "kubeovn.io", Resource: "subnets"}, "")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := watchSubnets(ctx, dyn, slog.New(slog.DiscardHandler), func(any) {})
	if err != nil || ctx.Err() != nil {
		t.Fatalf("watchSubnets without the CRD: %v (context: %v), want it back before the test's deadline", err, ctx.Err())
	}
	cluster := netip.MustParsePrefix("10.42.0.0/16")
	if routes, _ := v.wiring([]netip.Prefix{cluster}, true, false); len(routes) != 1 || routes[0] != cluster {
		t.Errorf("routes %v without any Subnet, want the cluster CIDR alone", routes)
	}
}
