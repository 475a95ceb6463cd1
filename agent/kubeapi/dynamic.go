package kubeapi

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// DynamicInformer is an informer of a custom resource (all namespaces) and a lister of its
// cache; the caller runs it (RunWithContext).
func DynamicInformer(dyn dynamic.Interface, gvr schema.GroupVersionResource) Informer[cache.GenericLister] {
	inf := NewInformer(ListWatch[*unstructured.UnstructuredList](dyn.Resource(gvr), nil), &unstructured.Unstructured{}, nil)
	return Informer[cache.GenericLister]{inf, cache.NewGenericLister(inf.GetIndexer(), gvr.GroupResource())}
}

// Dynamic is the term's informer of a custom resource through dyn, made on first use and run
// by Start and stopped with the others (a feature without a Shutdown of its own uses it).
func (f *Informers) Dynamic(dyn dynamic.Interface, gvr schema.GroupVersionResource) Informer[cache.GenericLister] {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := "dynamic:" + gvr.String()
	inf, ok := f.made[key]
	if !ok {
		inf = NewInformer(ListWatch[*unstructured.UnstructuredList](dyn.Resource(gvr), nil), &unstructured.Unstructured{}, nil)
		f.made[key] = inf
	}
	return Informer[cache.GenericLister]{inf, cache.NewGenericLister(inf.GetIndexer(), gvr.GroupResource())}
}
