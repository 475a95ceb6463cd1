package kubeapi

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Client is a typed client of each API group edgeovn uses.
type Client struct {
	groups map[schema.GroupVersion]rest.Interface // one per entry of groups (scheme.go)
}

// NewForConfig builds the clients; rc's rate limits and user agent apply to all of them
// together (one shared rate limiter and HTTP client, as with client-go's Clientset).
func NewForConfig(rc *rest.Config) (*Client, error) {
	base := rest.CopyConfig(rc)
	if base.RateLimiter == nil && base.QPS > 0 {
		if base.Burst <= 0 {
			return nil, fmt.Errorf("kubernetes client: burst must be positive with QPS %v", base.QPS)
		}
		base.RateLimiter = rateLimiter(base)
	}
	httpClient, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, fmt.Errorf("kubernetes http client: %w", err)
	}
	c := &Client{groups: make(map[schema.GroupVersion]rest.Interface, len(groups))}
	for _, g := range groups {
		cfg := rest.CopyConfig(base)
		gv := g.gv
		cfg.GroupVersion, cfg.APIPath = &gv, "/apis"
		if gv.Group == "" {
			cfg.APIPath = "/api"
		}
		cfg.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(Scheme, codecs).WithoutConversion()
		rc, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("kubernetes client for %s: %w", gv, err)
		}
		c.groups[gv] = rc
	}
	return c, nil
}

// ClientWithList is a typed client of one resource, namespaced or not.
type ClientWithList[T gentypeObject, L listObject] = gentype.ClientWithList[T, L]

func newClient[T gentypeObject, L listObject](rc rest.Interface, resource, ns string, obj func() T, list func() L) *ClientWithList[T, L] {
	return gentype.NewClientWithList[T, L](resource, rc, parameterCodec, ns, obj, list, gentype.PrefersProtobuf[T]())
}

// Pods is the client of the pods of namespace ns ("" all).
func (c *Client) Pods(ns string) *ClientWithList[*corev1.Pod, *corev1.PodList] {
	return newClient(c.groups[corev1.SchemeGroupVersion], "pods", ns, func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })
}

// Nodes is the client of the nodes.
func (c *Client) Nodes() *ClientWithList[*corev1.Node, *corev1.NodeList] {
	return newClient(c.groups[corev1.SchemeGroupVersion], "nodes", "", func() *corev1.Node { return &corev1.Node{} }, func() *corev1.NodeList { return &corev1.NodeList{} })
}

// Namespaces is the client of the namespaces.
func (c *Client) Namespaces() *ClientWithList[*corev1.Namespace, *corev1.NamespaceList] {
	return newClient(c.groups[corev1.SchemeGroupVersion], "namespaces", "", func() *corev1.Namespace { return &corev1.Namespace{} }, func() *corev1.NamespaceList { return &corev1.NamespaceList{} })
}

// Services is the client of the Services of namespace ns ("" all).
func (c *Client) Services(ns string) *ClientWithList[*corev1.Service, *corev1.ServiceList] {
	return newClient(c.groups[corev1.SchemeGroupVersion], "services", ns, func() *corev1.Service { return &corev1.Service{} }, func() *corev1.ServiceList { return &corev1.ServiceList{} })
}

// Events is the client of the Events (core/v1) of namespace ns.
func (c *Client) Events(ns string) *ClientWithList[*corev1.Event, *corev1.EventList] {
	return newClient(c.groups[corev1.SchemeGroupVersion], "events", ns, func() *corev1.Event { return &corev1.Event{} }, func() *corev1.EventList { return &corev1.EventList{} })
}

// EndpointSlices is the client of the EndpointSlices of namespace ns ("" all).
func (c *Client) EndpointSlices(ns string) *ClientWithList[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList] {
	return newClient(c.groups[discoveryv1.SchemeGroupVersion], "endpointslices", ns, func() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} },
		func() *discoveryv1.EndpointSliceList { return &discoveryv1.EndpointSliceList{} })
}

// NetworkPolicies is the client of the NetworkPolicies of namespace ns ("" all).
func (c *Client) NetworkPolicies(ns string) *ClientWithList[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList] {
	return newClient(c.groups[networkingv1.SchemeGroupVersion], "networkpolicies", ns, func() *networkingv1.NetworkPolicy { return &networkingv1.NetworkPolicy{} },
		func() *networkingv1.NetworkPolicyList { return &networkingv1.NetworkPolicyList{} })
}

// StatefulSets is the client of the StatefulSets of namespace ns ("" all).
func (c *Client) StatefulSets(ns string) *ClientWithList[*appsv1.StatefulSet, *appsv1.StatefulSetList] {
	return newClient(c.groups[appsv1.SchemeGroupVersion], "statefulsets", ns, func() *appsv1.StatefulSet { return &appsv1.StatefulSet{} },
		func() *appsv1.StatefulSetList { return &appsv1.StatefulSetList{} })
}

// Leases is the client of the Leases of namespace ns.
func (c *Client) Leases(ns string) *ClientWithList[*coordinationv1.Lease, *coordinationv1.LeaseList] {
	return newClient(c.groups[coordinationv1.SchemeGroupVersion], "leases", ns, func() *coordinationv1.Lease { return &coordinationv1.Lease{} },
		func() *coordinationv1.LeaseList { return &coordinationv1.LeaseList{} })
}

// SelfSubjectAccessReviews is the client that asks what this client may do.
func (c *Client) SelfSubjectAccessReviews() *gentype.Client[*authorizationv1.SelfSubjectAccessReview] {
	return gentype.NewClient[*authorizationv1.SelfSubjectAccessReview]("selfsubjectaccessreviews", c.groups[authorizationv1.SchemeGroupVersion], parameterCodec, "",
		func() *authorizationv1.SelfSubjectAccessReview { return &authorizationv1.SelfSubjectAccessReview{} },
		gentype.PrefersProtobuf[*authorizationv1.SelfSubjectAccessReview]())
}

// gentypeObject and listObject are what gentype's clients take.
type (
	gentypeObject interface {
		runtime.Object
		metav1.Object
	}
	listObject = runtime.Object
)

// rateLimiter is the one token bucket all the groups' clients share.
func rateLimiter(rc *rest.Config) flowcontrol.RateLimiter {
	return flowcontrol.NewTokenBucketRateLimiter(rc.QPS, rc.Burst)
}
