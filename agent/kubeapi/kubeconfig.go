package kubeapi

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// rate is a client's own limit on its API requests (client-go's token bucket).
type rate struct {
	qps   float32
	burst int
}

// The node role, the election and the diagnostics make a few requests a minute and share
// one client at client-go's usual rate. The controller role patches every new pod and has a
// client of its own: at 50 a second, the shared client's rate was the ceiling of pods
// allocated per second. Its limit sits above the goal of 200 pods a second, with room for
// each pod's node update; the API server's own priority and fairness still protects it.
// Custom resources (Subnets, Vpcs, ...) are few and have a client of their own, so that they
// never wait behind a burst of pods. Its rate is the shared client's: a new cluster's start
// installs nine CRDs, waits for each to be Established and lists and watches some fifteen kinds
// of them from both roles within a second, and at 20 a second (burst 40) those lists waited
// up to 0.3 s on the client's throttle, which held the first pod's ADD past its 300 ms goal.
var (
	sharedRate     = rate{qps: 50, burst: 100}
	controllerRate = rate{qps: 500, burst: 1000}
	dynamicRate    = sharedRate
)

// Load loads the kubeconfig at path ("" for in-cluster) once, without waiting for it, and
// returns a client at the shared rate: what the diagnostic commands (edgeovn status, doctor)
// connect with, as the daemon does.
func Load(path string) (*Client, error) {
	return load(path, sharedRate)
}

func load(path string, r rate) (*Client, error) {
	rc, err := restConfig(path, r)
	if err != nil {
		return nil, err
	}
	kube, err := NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create kubernetes client: %w", err)
	}
	return kube, nil
}

// restConfig loads the kubeconfig at path with edgeovn's user agent and the rate r.
func restConfig(path string, r rate) (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q: %w", path, err)
	}
	rc.QPS, rc.Burst = r.qps, r.burst
	rc.UserAgent = "edgeovn"
	return rc, nil
}
