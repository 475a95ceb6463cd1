package harness

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// controllers are the kube-controller-manager controllers the rig runs: the ones Services
// need (EndpointSlices from selectors, mirrored from custom Endpoints, legacy Endpoints for
// tools that still read them), and cheap housekeeping that makes a namespace usable as on a
// real cluster (its default ServiceAccount, the kube-root-ca.crt ConfigMap that token
// automount needs, deletion of a namespace's contents).
var controllers = []string{
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"endpoints-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
	"namespace-controller",
}

// rootCAConfigMap is what the root CA publisher writes into every namespace.
const rootCAConfigMap = "kube-root-ca.crt"

// ControllerManagerRequest says how to run kube-controller-manager. The zero value runs the
// controllers Services need (see controllers).
type ControllerManagerRequest struct {
	// Controllers replaces that list: {"*"} runs every controller enabled by default, as a
	// cluster has them (the upstream e2e tests need ReplicationControllers, Deployments,
	// garbage collection, ...).
	Controllers []string
	// Extra flags come last (a dual-stack cluster's --allocate-node-cidrs, --cluster-cidr and
	// node CIDR mask sizes, say).
	Extra []string
}

// StartControllerManager starts kube-controller-manager in the rig's namespace with the
// requested controllers, no leader election and no serving port, and
// waits until its controllers run: the root CA publisher has written kube-root-ca.crt into
// kube-public, which it does only once its informers synced. From then on, a Service whose
// selected pods are Running and Ready with pod IPs gets an EndpointSlice.
func (r *Rig) StartControllerManager(ctx context.Context, req ControllerManagerRequest) (*Process, error) {
	list := controllers
	if len(req.Controllers) > 0 {
		list = req.Controllers
	}
	if err := checkBinary(ControllerManager, r.opts.componentPath(ControllerManager)); err != nil {
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	spec := ProcessSpec{Name: "kube-controller-manager", Path: r.opts.componentPath(ControllerManager), Args: []string{
		"--kubeconfig=" + r.Kubeconfig,
		"--controllers=" + strings.Join(list, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--root-ca-file=" + r.path("apiserver-certs/apiserver.crt"),
	}}
	spec.Args = append(spec.Args, req.Extra...)
	return r.spawn(ctx, spec, r.rootCAPublished)
}

// rootCAPublished is kube-controller-manager's readiness check: kube-root-ca.crt is in
// kube-public (after a reboot it is there already: the check then only sees the process up).
func (r *Rig) rootCAPublished(ctx context.Context) error {
	_, err := r.kube.CoreV1().ConfigMaps("kube-public").Get(ctx, rootCAConfigMap, metav1.GetOptions{})
	return err
}
