package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/e2e/skip"
)

// metallbNamespace is where MetalLB's configuration and its speakers' Pod objects live.
const metallbNamespace = "metallb-system"

// metallbLabels select the speakers' Pod objects: memberlist reads their addresses to join.
const metallbLabels = "app=metallb,component=speaker"

var (
	ipPoolResource = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
	l2AdvResource  = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "l2advertisements"}
)

// metallbParts are MetalLB's controller and speaker binaries and its CRDs, built from
// go.universe.tf/metallb v0.14.9 by `make deps` (e2e/scripts/build-metallb.sh) into
// .cache/bin; the Makefile exports EDGEOVN_METALLB_{CONTROLLER,SPEAKER,CRDS}. Without them
// the test cannot run: under CI=true that fails.
type metallbParts struct{ controller, speaker, crds string }

func metallbBinaries(t *testing.T) metallbParts {
	p := metallbParts{os.Getenv("EDGEOVN_METALLB_CONTROLLER"), os.Getenv("EDGEOVN_METALLB_SPEAKER"), os.Getenv("EDGEOVN_METALLB_CRDS")}
	for name, path := range map[string]string{"EDGEOVN_METALLB_CONTROLLER": p.controller, "EDGEOVN_METALLB_SPEAKER": p.speaker, "EDGEOVN_METALLB_CRDS": p.crds} {
		if path == "" {
			skip.Now(t, "%s (MetalLB v0.14.9, e2e/scripts/build-metallb.sh) not set", name)
		}
		if _, err := os.Stat(path); err != nil {
			skip.Now(t, "metallb: %v", err)
		}
	}
	return p
}

// metallbRequest is one MetalLB installation: its CRDs and L2 configuration in the API
// server of env, its controller in env's host namespace, and a speaker on each host given.
type metallbRequest struct {
	Parts metallbParts
	// Pool is the IPAddressPool's one range, "192.0.2.200-192.0.2.209".
	Pool string
	// Interfaces restrict the L2Advertisement (the hosts' LAN side); empty: every interface.
	Interfaces []string
}

// metallbSpeakerHost is a host a speaker runs on: its rig (namespace, address, kubeconfig)
// and its Node's name.
type metallbSpeakerHost struct {
	rig  *harness.Rig
	node string
}

// installMetalLB applies MetalLB's CRDs, its namespace, the pool and L2Advertisement, and
// starts the controller (on the first host) and a speaker on each host, as the processes a
// MetalLB Deployment and DaemonSet would run (the speaker's Pod object exists, as its own
// pod's would: it reads it at start, and memberlist finds its peers through those objects'
// addresses, the hosts' own).
func installMetalLB(ctx context.Context, t *testing.T, kube *env, req metallbRequest, hosts ...metallbSpeakerHost) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(kube.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	applyCRDFile(ctx, t, dyn, req.Parts.crds)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metallbNamespace}}
	if _, err := kube.kubelet.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pool := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
		"metadata": map[string]any{"name": "site", "namespace": metallbNamespace},
		"spec":     map[string]any{"addresses": []any{req.Pool}}}}
	adv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "metallb.io/v1beta1", "kind": "L2Advertisement",
		"metadata": map[string]any{"name": "site", "namespace": metallbNamespace},
		"spec":     map[string]any{"ipAddressPools": []any{"site"}}}}
	if len(req.Interfaces) > 0 {
		ifs := make([]any, len(req.Interfaces))
		for i, s := range req.Interfaces {
			ifs[i] = s
		}
		adv.Object["spec"].(map[string]any)["interfaces"] = ifs
	}
	for res, obj := range map[schema.GroupVersionResource]*unstructured.Unstructured{ipPoolResource: pool, l2AdvResource: adv} {
		eventually(ctx, t, "create "+obj.GetKind()+" (its CRD served)", func() bool {
			_, err := dyn.Resource(res).Namespace(metallbNamespace).Create(ctx, obj, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err)
		})
	}
	env := []string{"KUBECONFIG=" + kube.rig.Kubeconfig}
	if _, err := kube.rig.Start(ctx, harness.ProcessSpec{Name: "metallb-controller", Path: req.Parts.controller, Env: env,
		Args: []string{"--namespace=" + metallbNamespace, "--webhook-mode=disabled", "--port=7572", "--log-level=info"}}); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		pod := speakerPod(ctx, t, kube, h)
		if _, err := h.rig.Start(ctx, harness.ProcessSpec{Name: "metallb-speaker", Path: req.Parts.speaker, Env: []string{"KUBECONFIG=" + h.rig.Kubeconfig},
			Args: []string{"--namespace=" + metallbNamespace, "--node-name=" + h.node, "--pod-name=" + pod,
				"--ml-bindaddr=" + h.rig.NodeIP.String(), "--ml-labels=" + metallbLabels, "--port=7472", "--log-level=debug"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// speakerPod creates the host-network Pod object of the speaker on h, with the host's
// address as its pod IP (as the kubelet reports a host-network pod's), and returns its name.
func speakerPod(ctx context.Context, t *testing.T, kube *env, h metallbSpeakerHost) string {
	t.Helper()
	name := "speaker-" + h.node
	pods := kube.kubelet.Kube.CoreV1().Pods(metallbNamespace)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: metallbNamespace, Name: "default"}}
	if _, err := kube.kubelet.Kube.CoreV1().ServiceAccounts(metallbNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(metallbLabels, ",") {
		k, v, _ := strings.Cut(kv, "=")
		labels[k] = v
	}
	pod, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: h.node, HostNetwork: true, AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "speaker", Image: "registry.invalid/metallb-speaker:v0.14.9"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the speaker's pod object on %s: %v", h.node, err)
	}
	ip := h.rig.NodeIP.String()
	pod.Status.Phase, pod.Status.PodIP, pod.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("report the speaker's address on %s: %v", h.node, err)
	}
	return name
}

// applyCRDFile creates every CRD of a multi-document YAML file and waits until each is served.
func applyCRDFile(ctx context.Context, t *testing.T, dyn dynamic.Interface, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		if len(obj) == 0 {
			continue
		}
		crd := &unstructured.Unstructured{Object: obj}
		if _, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create crd %s: %v", crd.GetName(), err)
		}
		eventually(ctx, t, "crd "+crd.GetName()+" established", func() bool {
			cur, err := dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
			return false
		})
	}
}

// lbIngress waits until the Service has a LoadBalancer IP in its status and returns it.
func lbIngress(ctx context.Context, t *testing.T, kube *env, name string) string {
	t.Helper()
	var ip string
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	eventually(wctx, t, "a LoadBalancer IP for "+name+" from MetalLB", func() bool {
		svc, err := kube.kubelet.Kube.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && len(svc.Status.LoadBalancer.Ingress) > 0 {
			ip = svc.Status.LoadBalancer.Ingress[0].IP
		}
		return ip != ""
	})
	return ip
}

// TestLoadBalancerMetalLB: a real LoadBalancer controller, MetalLB v0.14.9 in L2 mode (its
// controller and speaker as processes against the rig's API server), gives LoadBalancer
// Services addresses from a pool on the host's LAN; the speaker answers the site's ARP for
// them with the host's eth0 MAC; a site client on the LAN reaches the backend through them
// without kube-proxy (edgeovn serving them), with externalTrafficPolicy Cluster (the backend
// sees the host's join address) and Local (it sees the client).
func TestLoadBalancerMetalLB(t *testing.T) {
	parts := metallbBinaries(t)
	env := startEnvOpts(t, false, harness.Options{LANPeer: true})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	if err := env.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	s := &lbEnv{env: env, ctx: ctx, site: "/var/run/netns/" + env.rig.LANNetns}
	s.join = nodeJoin(ctx, t, env).IPs[0]
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	eventually(ctx, t, "edgeovn serves the services itself", func() bool {
		return strings.Contains(env.daemonLog(), "edgeovn serves host traffic to services and node ports")
	})
	s.web1 = runPodIn(ctx, t, env, "default", "web-1")
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: s.web1.Netns, Port: 8080, Name: "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	pool := netip.MustParsePrefix("192.0.2.200/29")
	installMetalLB(ctx, t, env, metallbRequest{Parts: parts, Pool: pool.String(), Interfaces: []string{"eth0"}},
		metallbSpeakerHost{rig: env.rig, node: node})
	mac := linkMAC(ctx, t, env.rig.Netns, "eth0")
	for _, c := range []struct {
		name   string
		policy corev1.ServiceExternalTrafficPolicy
		want   netip.Addr
	}{
		{"mlb-cluster", corev1.ServiceExternalTrafficPolicyCluster, s.join},
		{"mlb-local", corev1.ServiceExternalTrafficPolicyLocal, netip.MustParseAddr("192.0.2.1")},
	} {
		s.lbService(t, c.name, func(svc *corev1.Service) {
			svc.Spec.Type, svc.Spec.ExternalTrafficPolicy = corev1.ServiceTypeLoadBalancer, c.policy
		})
		ip := netip.MustParseAddr(lbIngress(ctx, t, env, c.name))
		if !pool.Contains(ip) {
			t.Fatalf("%s: MetalLB gave %s, not from the pool %s", c.name, ip, pool)
		}
		if got := s.reaches(t, s.site, netip.AddrPortFrom(ip, 80).String()); got != c.want {
			t.Errorf("%s (%s) from the site: web-1 saw %s, want %s", c.name, c.policy, got, c.want)
		}
		if got := neighMAC(ctx, t, env.rig.LANNetns, ip); got != mac {
			t.Errorf("%s: the site resolved %s to %q, want the host's eth0 %s (MetalLB's speaker answering ARP)", c.name, ip, got, mac)
		}
	}
}

// linkMAC is the MAC address of a device in a namespace.
func linkMAC(ctx context.Context, t *testing.T, netns, dev string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "ip", "-n", netns, "-o", "link", "show", dev).CombinedOutput()
	if err != nil {
		t.Fatalf("ip link show %s in %s: %v: %s", dev, netns, err, out)
	}
	return fieldAfter(string(out), "link/ether")
}

// neighMAC is the link-layer address a namespace's neighbour table holds for ip, "" if none.
func neighMAC(ctx context.Context, t *testing.T, netns string, ip netip.Addr) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "ip", "-n", netns, "neigh", "show", ip.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ip neigh show %s in %s: %v: %s", ip, netns, err, out)
	}
	return fieldAfter(string(out), "lladdr")
}

// fieldAfter is the word after key in s, "" if key is not there.
func fieldAfter(s, key string) string {
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1]
		}
	}
	return ""
}
