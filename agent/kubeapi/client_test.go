package kubeapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Each typed client asks its group's path, preferring protobuf; a wrong group or API path
// would be a 404 on a real server.
func TestClientPaths(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+strings.Split(r.Header.Get("Accept"), ",")[0])
		mu.Unlock()
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := NewForConfig(&rest.Config{Host: srv.URL, QPS: 10, Burst: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _ = c.Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	_, _ = c.Nodes().Patch(ctx, "n", types.MergePatchType, []byte("{}"), metav1.PatchOptions{})
	_, _ = c.Namespaces().Get(ctx, "ns", metav1.GetOptions{})
	_, _ = c.Services("ns").List(ctx, metav1.ListOptions{})
	_, _ = c.EndpointSlices("ns").List(ctx, metav1.ListOptions{})
	_, _ = c.NetworkPolicies("").List(ctx, metav1.ListOptions{})
	_, _ = c.StatefulSets("ns").Get(ctx, "s", metav1.GetOptions{})
	_, _ = c.Leases("kube-system").Get(ctx, "l", metav1.GetOptions{})
	_, _ = c.Events("ns").Get(ctx, "e", metav1.GetOptions{})
	_, _ = c.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
	const pb = "application/vnd.kubernetes.protobuf"
	want := []string{
		"GET /api/v1/namespaces/ns/pods/p " + pb,
		"PATCH /api/v1/nodes/n " + pb,
		"GET /api/v1/namespaces/ns " + pb,
		"GET /api/v1/namespaces/ns/services " + pb,
		"GET /apis/discovery.k8s.io/v1/namespaces/ns/endpointslices " + pb,
		"GET /apis/networking.k8s.io/v1/networkpolicies " + pb,
		"GET /apis/apps/v1/namespaces/ns/statefulsets/s " + pb,
		"GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l " + pb,
		"GET /api/v1/namespaces/ns/events/e " + pb,
		"POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews " + pb,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNewForConfigRefusesQPSWithoutBurst(t *testing.T) {
	if _, err := NewForConfig(&rest.Config{Host: "http://127.0.0.1:1", QPS: 5}); err == nil || !strings.Contains(err.Error(), "burst") {
		t.Fatalf("QPS without burst: err = %v, want one naming the burst", err)
	}
}
