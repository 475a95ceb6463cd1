package ctltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// Kube is an API client whose requests the fake clientset serves: the controller role talks
// to it through the same kubeapi.Client it uses in the daemon (over HTTP to a RoundTripper,
// not to a server), and the test reads and seeds objects through Fake.
type Kube struct {
	Client *kubeapi.Client
	Fake   *fake.Clientset
	// Watches are the informers' watches registered so far.
	Watches *Watches
}

// NewKube serves objs (Pods, Nodes, Namespaces, ...) to a kubeapi.Client.
func NewKube(t testing.TB, objs ...runtime.Object) *Kube {
	t.Helper()
	cs := fake.NewClientset(objs...)
	c, err := kubeapi.NewForConfig(&rest.Config{Host: "http://fake-apiserver", Transport: &tracker{cs: cs}})
	if err != nil {
		t.Fatalf("kubernetes client over the fake clientset: %v", err)
	}
	return &Kube{Client: c, Fake: cs, Watches: countWatches(cs)}
}

// tracker turns REST requests into the fake clientset's actions.
type tracker struct{ cs *fake.Clientset }

var codecs = serializer.NewCodecFactory(kubeapi.Scheme)

// target is what a request path names: /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]], or
// /apis/GROUP/VERSION/... the same way.
type target struct {
	gvr       schema.GroupVersionResource
	ns, name  string
	subsource string
}

func parsePath(p string) (target, error) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	var t target
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		t.gvr.Version, segs = segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		t.gvr.Group, t.gvr.Version, segs = segs[1], segs[2], segs[3:]
	default:
		return t, fmt.Errorf("path %s: not an API path", p)
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		t.ns, segs = segs[1], segs[2:]
	}
	t.gvr.Resource = segs[0]
	if len(segs) > 1 {
		t.name = segs[1]
	}
	if len(segs) > 2 {
		t.subsource = segs[2]
	}
	return t, nil
}

func (tr *tracker) RoundTrip(req *http.Request) (*http.Response, error) {
	t, err := parsePath(req.URL.Path)
	if err != nil {
		return nil, err
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
	}
	if req.Method == http.MethodGet && t.name == "" {
		if q := req.URL.Query().Get("watch"); q == "true" || q == "1" {
			return tr.watch(req, t)
		}
		return tr.list(t)
	}
	action, err := t.action(req.Method, req.Header.Get("Content-Type"), body)
	if err != nil {
		return nil, err
	}
	obj, err := tr.cs.Invokes(action, nil)
	if err != nil {
		return statusResponse(err), nil
	}
	if obj == nil {
		return statusResponse(apierrors.NewNotFound(t.gvr.GroupResource(), t.name)), nil
	}
	return objectResponse(http.StatusOK, obj)
}

// listKinds names the kinds of the resources the fake API lists and watches.
var listKinds = map[string]string{"pods": "Pod", "nodes": "Node", "namespaces": "Namespace", "statefulsets": "StatefulSet",
	"services": "Service", "endpointslices": "EndpointSlice", "networkpolicies": "NetworkPolicy", "events": "Event"}

func (t target) listKind() (schema.GroupVersionKind, error) {
	kind, ok := listKinds[t.gvr.Resource]
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("list %s: not served by the fake API", t.gvr.Resource)
	}
	return t.gvr.GroupVersion().WithKind(kind), nil
}

func (tr *tracker) list(t target) (*http.Response, error) {
	gvk, err := t.listKind()
	if err != nil {
		return nil, err
	}
	obj, err := tr.cs.Invokes(k8stesting.NewListAction(t.gvr, gvk, t.ns, metav1.ListOptions{}), nil)
	if err != nil {
		return statusResponse(err), nil
	}
	return objectResponse(http.StatusOK, obj)
}

// watch streams the tracker's events for the resource as the API server does (one JSON
// watch event a line) until the client goes away.
func (tr *tracker) watch(req *http.Request, t target) (*http.Response, error) {
	w, err := tr.cs.InvokesWatch(k8stesting.NewWatchAction(t.gvr, t.ns, metav1.ListOptions{}))
	if err != nil {
		return statusResponse(err), nil
	}
	pr, pw := io.Pipe()
	go func() {
		defer w.Stop()
		for {
			select {
			case <-req.Context().Done():
				pw.CloseWithError(req.Context().Err())
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					pw.Close()
					return
				}
				if err := writeEvent(pw, ev); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}
	}()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: pr}, nil
}

func writeEvent(w io.Writer, ev watch.Event) error {
	var obj bytes.Buffer
	gvks, _, err := kubeapi.Scheme.ObjectKinds(ev.Object)
	if err != nil {
		return fmt.Errorf("kind of %T: %w", ev.Object, err)
	}
	if err := codecs.LegacyCodec(gvks[0].GroupVersion()).Encode(ev.Object, &obj); err != nil {
		return err
	}
	line, err := json.Marshal(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: obj.Bytes()}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

func (t target) action(method, contentType string, body []byte) (k8stesting.Action, error) {
	switch method {
	case http.MethodGet:
		return k8stesting.NewGetSubresourceAction(t.gvr, t.ns, t.subsource, t.name), nil
	case http.MethodPatch:
		if t.subsource != "" {
			return k8stesting.NewPatchSubresourceAction(t.gvr, t.ns, t.name, types.PatchType(contentType), body, t.subsource), nil
		}
		return k8stesting.NewPatchAction(t.gvr, t.ns, t.name, types.PatchType(contentType), body), nil
	case http.MethodPost, http.MethodPut:
		obj, _, err := codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decode %s body for %s: %w", method, t.gvr.Resource, err)
		}
		if method == http.MethodPost {
			return k8stesting.NewCreateAction(t.gvr, t.ns, obj), nil
		}
		return k8stesting.NewUpdateAction(t.gvr, t.ns, obj), nil
	case http.MethodDelete:
		return k8stesting.NewDeleteAction(t.gvr, t.ns, t.name), nil
	}
	return nil, fmt.Errorf("method %s on %s: not served by the fake API", method, t.gvr.Resource)
}

func objectResponse(code int, obj runtime.Object) (*http.Response, error) {
	gvks, _, err := kubeapi.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, fmt.Errorf("kind of %T: %w", obj, err)
	}
	var buf bytes.Buffer
	if err := codecs.LegacyCodec(gvks[0].GroupVersion()).Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(&buf)}, nil
}

func statusResponse(err error) *http.Response {
	var st apierrors.APIStatus = apierrors.NewInternalError(err)
	if s, ok := err.(apierrors.APIStatus); ok {
		st = s
	}
	status := st.Status()
	status.APIVersion, status.Kind = "v1", "Status"
	resp, encErr := objectResponse(int(status.Code), &status)
	if encErr != nil {
		return &http.Response{StatusCode: http.StatusInternalServerError, Body: io.NopCloser(strings.NewReader(encErr.Error()))}
	}
	resp.StatusCode = int(status.Code)
	return resp
}
