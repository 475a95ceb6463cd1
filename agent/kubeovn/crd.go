package kubeovn

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

//go:embed crd.yaml
var crdYAML []byte

//go:embed crd_underlay.yaml
var underlayCRDYAML []byte

//go:embed crd_vpc.yaml
var vpcCRDYAML []byte

//go:embed crd_securitygroup.yaml
var securityGroupCRDYAML []byte

//go:embed crd_nat.yaml
var natCRDYAML []byte

// CRDResource is the API of CustomResourceDefinitions.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// The CRDs' names.
const (
	SubnetCRDName          = "subnets.kubeovn.io"
	ProviderNetworkCRDName = "provider-networks.kubeovn.io"
	VlanCRDName            = "vlans.kubeovn.io"
	VpcCRDName             = "vpcs.kubeovn.io"
	SecurityGroupCRDName   = "security-groups.kubeovn.io"
	OvnEipCRDName          = "ovn-eips.kubeovn.io"
	OvnFipCRDName          = "ovn-fips.kubeovn.io"
	OvnSnatRuleCRDName     = "ovn-snat-rules.kubeovn.io"
	OvnDnatRuleCRDName     = "ovn-dnat-rules.kubeovn.io"
)

// CRDs returns every CRD edgeovn installs: Subnet, ProviderNetwork, Vlan, Vpc, SecurityGroup,
// OvnEip, OvnFip, OvnSnatRule, OvnDnatRule.
func CRDs() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range [][]byte{crdYAML, underlayCRDYAML, vpcCRDYAML, securityGroupCRDYAML, natCRDYAML} {
		crds, err := readCRDs(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, crds...)
	}
	return out, nil
}

// readCRDs reads the YAML documents of doc.
func readCRDs(doc []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, part := range bytes.Split(doc, []byte("\n---\n")) {
		j, err := yaml.YAMLToJSON(part)
		if err != nil {
			return nil, fmt.Errorf("read crd: %w", err)
		}
		var obj map[string]any
		if err := json.Unmarshal(j, &obj); err != nil {
			return nil, fmt.Errorf("read crd: %w", err)
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	return out, nil
}

// EnsureCRD creates each CRD edgeovn serves (CRDs) when the cluster has none of that name (one
// Kube-OVN installed is kept) and waits until the API server serves them (condition
// Established), at most ctx's time. All are created at once, before any is waited for: the
// API server establishes them side by side, and a new cluster's controller (whose first pod
// waits for it) does not wait for each in turn (nine CRDs one after the other took a second).
func EnsureCRD(ctx context.Context, dyn dynamic.Interface, log *slog.Logger) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	cur := make([]*unstructured.Unstructured, len(crds))
	g, gctx := errgroup.WithContext(ctx)
	for i, crd := range crds {
		g.Go(func() (err error) {
			cur[i], err = ensureCRD(gctx, dyn, crd, log)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(ctx)
	for _, crd := range cur {
		g.Go(func() error { return waitEstablished(gctx, dyn, crd) })
	}
	return g.Wait()
}

// ensureCRD creates crd unless one of its name exists, and returns the cluster's.
func ensureCRD(ctx context.Context, dyn dynamic.Interface, crd *unstructured.Unstructured, log *slog.Logger) (*unstructured.Unstructured, error) {
	crds, name := dyn.Resource(CRDResource), crd.GetName()
	cur, err := crds.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cur, err = crds.Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, err = crds.Get(ctx, name, metav1.GetOptions{})
		} else if err == nil {
			log.Info("installed a custom resource definition", "crd", name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ensure crd %s: %w", name, err)
	}
	return cur, nil
}

// establishedPoll is how often a CRD not yet Established is read again: the API server
// establishes a new one within milliseconds.
const establishedPoll = 20 * time.Millisecond

// waitEstablished waits until the CRD (as last read: cur) is Established.
func waitEstablished(ctx context.Context, dyn dynamic.Interface, cur *unstructured.Unstructured) error {
	crds, name := dyn.Resource(CRDResource), cur.GetName()
	for !established(cur) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for crd %s to be established: %w", name, ctx.Err())
		case <-time.After(establishedPoll):
		}
		var err error
		if cur, err = crds.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("wait for crd %s to be established: %w", name, err)
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
