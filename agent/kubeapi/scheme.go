package kubeapi

import (
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Scheme knows the types of the API groups edgeovn uses, and no others.
var Scheme = runtime.NewScheme()

var (
	codecs         = serializer.NewCodecFactory(Scheme)
	parameterCodec = runtime.NewParameterCodec(Scheme)
)

// groups are the API groups compiled in, each with how to register its types.
var groups = []struct {
	gv  schema.GroupVersion
	add func(*runtime.Scheme) error
}{
	{corev1.SchemeGroupVersion, corev1.AddToScheme},
	{appsv1.SchemeGroupVersion, appsv1.AddToScheme},
	{discoveryv1.SchemeGroupVersion, discoveryv1.AddToScheme},
	{networkingv1.SchemeGroupVersion, networkingv1.AddToScheme},
	{coordinationv1.SchemeGroupVersion, coordinationv1.AddToScheme},
	{authorizationv1.SchemeGroupVersion, authorizationv1.AddToScheme},
}

func init() {
	for _, g := range groups {
		utilruntime.Must(g.add(Scheme))
	}
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
}
