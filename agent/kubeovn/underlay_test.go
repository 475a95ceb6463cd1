package kubeovn

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProviderNetworkValidate(t *testing.T) {
	pn := func(name, def string, custom ...CustomInterface) *ProviderNetwork {
		return &ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ProviderNetworkSpec{DefaultInterface: def, CustomInterfaces: custom}}
	}
	if err := pn("site", "eth1", CustomInterface{Interface: "enp3s0", Nodes: []string{"a"}}).Validate(); err != nil {
		t.Fatalf("valid provider network refused: %v", err)
	}
	for _, c := range []struct {
		pn   *ProviderNetwork
		want string
	}{
		{pn("toolongname13", "eth1"), `provider network name "toolongname13" is 13 characters, at most 12`},
		{pn("Site", "eth1"), `provider network name "Site"`},
		{pn("site", ""), `spec.defaultInterface "" is not an interface name`},
		{pn("site", "eth1/0"), `spec.defaultInterface "eth1/0"`},
		{pn("site", "averyveryverylongif"), `spec.defaultInterface "averyveryverylongif"`},
		{pn("site", "eth 1"), `spec.defaultInterface "eth 1"`},
		{pn("site", "eth1", CustomInterface{Interface: "a:b", Nodes: []string{"n"}}), `spec.customInterfaces[0].interface "a:b"`},
		{pn("site", "eth1", CustomInterface{Interface: "eth2", Nodes: []string{"n"}}, CustomInterface{Interface: "eth3", Nodes: []string{"n"}}),
			"spec.customInterfaces[1].nodes: node n is also in customInterfaces[0]"},
	} {
		err := c.pn.Validate()
		if !errors.Is(err, ErrInvalidUnderlay) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: got %v, want an invalid spec naming %q", c.pn.Name, c.pn.Spec, err, c.want)
		}
	}
}

func TestProviderNetworkNodeInterface(t *testing.T) {
	pn := &ProviderNetwork{Spec: ProviderNetworkSpec{DefaultInterface: "eth1", ExcludeNodes: []string{"x"},
		CustomInterfaces: []CustomInterface{{Interface: "eth9", Nodes: []string{"c"}}}}}
	for node, want := range map[string]string{"a": "eth1", "c": "eth9", "x": ""} {
		got, ok := pn.NodeInterface(node, nil)
		if got != want || ok != (want != "") {
			t.Errorf("node %s: %q %v, want %q", node, got, ok, want)
		}
	}
	// With nodeSelector, the labels choose and excludeNodes is not read (Kube-OVN's rule).
	pn.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"site": "a"}}
	for _, c := range []struct {
		node   string
		labels map[string]string
		want   string
	}{{"a", map[string]string{"site": "a"}, "eth1"}, {"x", map[string]string{"site": "a"}, "eth1"}, {"c", map[string]string{"site": "a", "k": "v"}, "eth9"},
		{"a", map[string]string{"site": "b"}, ""}, {"a", nil, ""}} {
		got, ok := pn.NodeInterface(c.node, c.labels)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("selector site=a, node %s labels %v: %q %v, want %q", c.node, c.labels, got, ok, c.want)
		}
	}
	pn.Name = "site"
	pn.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "site", Operator: "Sometimes"}}}
	if err := pn.Validate(); !errors.Is(err, ErrInvalidUnderlay) || !strings.Contains(err.Error(), "spec.nodeSelector") {
		t.Errorf("invalid selector: %v, want an invalid spec naming spec.nodeSelector", err)
	}
	if _, ok := pn.NodeInterface("a", nil); !ok {
		t.Error("an invalid selector excludes the node: want it to apply (and be refused by Validate)")
	}
}

func TestVlanTag(t *testing.T) {
	v := func(id, old int, provider, oldProvider string) *Vlan {
		return &Vlan{ObjectMeta: metav1.ObjectMeta{Name: "v"}, Spec: VlanSpec{ID: id, VlanID: old, Provider: provider, ProviderInterfaceName: oldProvider}}
	}
	for _, c := range []struct {
		v      *Vlan
		id     int
		person string
	}{{v(100, 0, "site", ""), 100, "site"}, {v(0, 0, "site", ""), 0, "site"}, {v(0, 7, "", "site"), 7, "site"}, {v(4095, 0, "site", ""), 4095, "site"}} {
		id, p, err := c.v.Tag()
		if err != nil || id != c.id || p != c.person {
			t.Errorf("%+v: %d %s %v, want %d %s", c.v.Spec, id, p, err, c.id, c.person)
		}
	}
	for _, c := range []struct {
		v    *Vlan
		want string
	}{
		{v(4096, 0, "site", ""), "spec.id 4096 is out of range 0-4095"},
		{v(-1, 0, "site", ""), "spec.id -1 is out of range"},
		{v(0, 5000, "site", ""), "spec.vlanId 5000 is out of range"},
		{v(10, 0, "", ""), "spec.provider is empty"},
		{v(10, 0, "a_b", ""), `spec.provider: invalid underlay spec: provider network name "a_b"`},
	} {
		if _, _, err := c.v.Tag(); !errors.Is(err, ErrInvalidUnderlay) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.v.Spec, err, c.want)
		}
	}
}

func TestUnderlayCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.GetName())
	}
	if strings.Join(names, ",") != SubnetCRDName+","+ProviderNetworkCRDName+","+VlanCRDName+","+VpcCRDName+","+SecurityGroupCRDName+","+OvnEipCRDName+","+OvnFipCRDName+","+OvnSnatRuleCRDName+","+OvnDnatRuleCRDName {
		t.Fatalf("crds %v", names)
	}
}

func TestProviderNetworkConditions(t *testing.T) {
	var st ProviderNetworkStatus
	now := metav1.Now()
	if !st.SetNodeCondition("a", ConditionReady, "False", "InitOVSBridgeFailed", "no eth1", now) {
		t.Fatal("first set reported no change")
	}
	if st.SetNodeCondition("a", ConditionReady, "False", "InitOVSBridgeFailed", "no eth1", now) {
		t.Fatal("same set reported a change")
	}
}
