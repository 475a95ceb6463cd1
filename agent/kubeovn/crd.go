package kubeovn

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

//go:embed crd.yaml
var crdYAML []byte

// CRDResource is the API of CustomResourceDefinitions.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// SubnetCRDName is the Subnet CRD's name.
const SubnetCRDName = "subnets.kubeovn.io"

// SubnetCRD returns the CRD edgeovn installs.
func SubnetCRD() (*unstructured.Unstructured, error) {
	j, err := yaml.YAMLToJSON(crdYAML)
	if err != nil {
		return nil, fmt.Errorf("read subnet crd: %w", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(j, &obj); err != nil {
		return nil, fmt.Errorf("read subnet crd: %w", err)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// EnsureCRD creates the Subnet CRD when the cluster has none (one Kube-OVN installed is kept)
// and waits until the API server serves it (condition Established), at most ctx's time.
func EnsureCRD(ctx context.Context, dyn dynamic.Interface, log *slog.Logger) error {
	crds := dyn.Resource(CRDResource)
	cur, err := crds.Get(ctx, SubnetCRDName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		crd, perr := SubnetCRD()
		if perr != nil {
			return perr
		}
		cur, err = crds.Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, err = crds.Get(ctx, SubnetCRDName, metav1.GetOptions{})
		} else if err == nil {
			log.Info("installed the Subnet custom resource definition", "crd", SubnetCRDName)
		}
	}
	if err != nil {
		return fmt.Errorf("ensure crd %s: %w", SubnetCRDName, err)
	}
	for !established(cur) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for crd %s to be established: %w", SubnetCRDName, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if cur, err = crds.Get(ctx, SubnetCRDName, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("wait for crd %s to be established: %w", SubnetCRDName, err)
		}
	}
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
