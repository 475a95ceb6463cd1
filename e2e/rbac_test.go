package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// TestRBACManifest applies the shipped packaging/rbac.yaml and runs edgeovn, both roles, with
// a token of its ServiceAccount kube-system/edgeovn, bound to exactly that ClusterRole, as an
// agent host would: it leads, wires the host, allocates a pod that then gets its network
// through CNI ADD, and no request of it is forbidden. A second host whose ServiceAccount is
// bound to the same role less "patch pods" does not campaign and names the missing right.
func TestRBACManifest(t *testing.T) {
	env, ctx := startNode(t)
	if err := syscall.Kill(env.daemon.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()
	objs := readManifest(t, "../packaging/rbac.yaml")
	applyObjects(ctx, t, env.rig, objs)
	applyObjects(ctx, t, env.rig, withoutPodPatch(t, objs, "edgeovn-less"))
	full := tokenKubeconfig(ctx, t, env.rig, "edgeovn")
	less := tokenKubeconfig(ctx, t, env.rig, "edgeovn-less")

	pl := env.startStandby(ctx, t, daemon.Standby{Name: "host-less", MetricsPort: 10666, Kubeconfig: less})
	eventually(ctx, t, "host-less names the right it lacks", func() bool {
		return logHas(pl, "missing api rights") && logHas(pl, "patch pods")
	})

	env.startDaemon(ctx, t, "edgeovn-rbac", "--kubeconfig="+full)
	eventually(ctx, t, "edgeovn with the packaged role leads", func() bool { return leaseHolder(ctx, env.rig) == node })
	sb := runPod(ctx, t, env, "rbac-pod")
	nodeJoin(ctx, t, env)
	if s := controllerState(ctx, t, env, metricsAddress); s != "leader" {
		t.Errorf("/controller with the packaged role: %q", s)
	}
	if s := controllerState(ctx, t, env, "127.0.0.1:10666"); !strings.Contains(s, "ineligible: missing api rights") || !strings.Contains(s, "patch pods") {
		t.Errorf("host-less /controller: %q", s)
	}
	if log := env.daemonLog(); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("a request of edgeovn with the packaged role was forbidden:\n%s", log)
	}
	t.Logf("pod %s got %s with the packaged role", sb.Pod.Name, sb.IP())
}

// readManifest decodes the manifest's documents.
func readManifest(t *testing.T, path string) []runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, doc := range strings.Split(string(b), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("decode %s: %v", path, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// withoutPodPatch renames the manifest's objects to name and drops "patch" on pods.
func withoutPodPatch(t *testing.T, objs []runtime.Object, name string) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	for _, o := range objs {
		switch v := o.DeepCopyObject().(type) {
		case *corev1.ServiceAccount:
			v.Name = name
			out = append(out, v)
		case *rbacv1.ClusterRole:
			v.Name = name
			for i, r := range v.Rules {
				if slices.Contains(r.Resources, "pods") {
					v.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(s string) bool { return s == "patch" })
				}
			}
			out = append(out, v)
		case *rbacv1.ClusterRoleBinding:
			v.Name, v.RoleRef.Name, v.Subjects[0].Name = name, name, name
			out = append(out, v)
		}
	}
	return out
}

func applyObjects(ctx context.Context, t *testing.T, rig *harness.Rig, objs []runtime.Object) {
	t.Helper()
	kube := rig.Kube()
	for _, o := range objs {
		var err error
		switch v := o.(type) {
		case *corev1.ServiceAccount:
			_, err = kube.CoreV1().ServiceAccounts(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = kube.RbacV1().ClusterRoles().Create(ctx, v, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, v, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected object %T in the manifest", o)
		}
		if err != nil {
			t.Fatalf("apply %T: %v", o, err)
		}
	}
}

// tokenKubeconfig writes a kubeconfig with a token of the ServiceAccount kube-system/sa, as
// `kubectl create token` makes one.
func tokenKubeconfig(ctx context.Context, t *testing.T, rig *harness.Rig, sa string) string {
	t.Helper()
	ttl := int64(3600)
	tok, err := rig.Kube().CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", sa, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["rig"] = &clientcmdapi.Cluster{Server: rig.APIServerURL, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["rig"] = &clientcmdapi.Context{Cluster: "rig", AuthInfo: sa}
	cfg.CurrentContext = "rig"
	path := filepath.Join(rig.Dir, "kubeconfig-"+sa)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
