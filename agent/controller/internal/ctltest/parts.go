package ctltest

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// The configuration the tests' terms run with: k3s's cluster and Service CIDRs, Kube-OVN's
// join CIDR and router name.
var (
	ClusterCIDR    = netip.MustParsePrefix("10.42.0.0/16")
	ClusterGateway = netip.MustParseAddr("10.42.0.1")
	JoinCIDR       = netip.MustParsePrefix("100.64.0.0/16")
	ServiceCIDR    = netip.MustParsePrefix("10.43.0.0/16")
)

// Router is the cluster router's name.
const Router = "ovn-cluster"

// Parts are the real parts one test's term runs on, with the context and log it runs under.
type Parts struct {
	Ctx    context.Context
	Log    *slog.Logger
	NB     *NB
	IPAM   *IPAM
	Events *Recorder
}

// Start starts the parts; they end with the test, the context after 30 s at the latest.
func Start(t *testing.T) *Parts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &Parts{Ctx: ctx, Log: log, NB: StartNB(ctx, t, log), IPAM: OpenIPAM(ctx, t, log), Events: &Recorder{}}
}

// SubnetClient is a dynamic fake serving Subnets, with the watches its informers registered.
type SubnetClient struct {
	*dynamicfake.FakeDynamicClient
	Watches *Watches
}

// NADResource is Multus's NetworkAttachmentDefinition (its CRD is Multus's; the fake serves
// it as the API server does once that CRD is installed).
var NADResource = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

// NAD is a NetworkAttachmentDefinition with spec.config config.
func NAD(namespace, name, config string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec":     map[string]any{"config": config},
	}}
}

// NewDynamic serves the Subnets, and NADs (ctltest.NAD), Vpcs (ctltest.Vpc) and SecurityGroups
// (ctltest.SecurityGroup).
func NewDynamic(t testing.TB, subnets []*kubeovn.Subnet, others ...runtime.Object) SubnetClient {
	t.Helper()
	objs := make([]runtime.Object, 0, len(subnets))
	for _, sn := range subnets {
		u, err := kubeovn.ToUnstructured(sn)
		if err != nil {
			t.Fatalf("subnet %s: %v", sn.Name, err)
		}
		objs = append(objs, u)
	}
	f := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kubeovn.SubnetResource: "SubnetList", kubeovn.VlanResource: "VlanList", kubeovn.ProviderNetworkResource: "ProviderNetworkList",
			kubeovn.VpcResource: "VpcList", NADResource: "NetworkAttachmentDefinitionList",
			kubeovn.SecurityGroupResource: "SecurityGroupList"}, objs...)
	for _, o := range others {
		// Created under their resource: the tracker would guess "networkattachmentdefinitions".
		u, gvr := o.(*unstructured.Unstructured), NADResource
		switch u.GetKind() {
		case "Vpc":
			gvr = kubeovn.VpcResource
		case "SecurityGroup":
			gvr = kubeovn.SecurityGroupResource
		}
		if err := f.Tracker().Create(gvr, u, u.GetNamespace()); err != nil {
			t.Fatalf("seed %s: %v", u.GetName(), err)
		}
	}
	return SubnetClient{FakeDynamicClient: f, Watches: countWatches(f)}
}

// Vpc is a kubeovn.io/v1 Vpc object as a person would create it.
func Vpc(t testing.TB, name string, spec kubeovn.VpcSpec) *unstructured.Unstructured {
	t.Helper()
	v := kubeovn.Vpc{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-vpc-" + name),
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}, Spec: spec}
	v.APIVersion, v.Kind = kubeovn.VpcResource.GroupVersion().String(), "Vpc"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v)
	if err != nil {
		t.Fatalf("vpc %s: %v", name, err)
	}
	return &unstructured.Unstructured{Object: m}
}

// SecurityGroup is a kubeovn.io/v1 SecurityGroup object as a person would create it.
func SecurityGroup(t testing.TB, name string, spec kubeovn.SecurityGroupSpec) *unstructured.Unstructured {
	t.Helper()
	sg := kubeovn.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-sg-" + name),
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}, Spec: spec}
	sg.APIVersion, sg.Kind = kubeovn.SecurityGroupResource.GroupVersion().String(), "SecurityGroup"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&sg)
	if err != nil {
		t.Fatalf("security group %s: %v", name, err)
	}
	return &unstructured.Unstructured{Object: m}
}

// Subnet is a Subnet object as a person would create it.
func Subnet(name string, spec kubeovn.SubnetSpec) *kubeovn.Subnet {
	return &kubeovn.Subnet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-subnet-" + name),
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}, Spec: spec}
}

// Node is a node with an InternalIP.
func Node(name, ip string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-node-" + name)},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
}
