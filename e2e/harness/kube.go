package harness

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Fixed ports: they live in the rig's own namespace, so they never collide.
const (
	etcdClientPort = 2379
	etcdPeerPort   = 2380
	apiServerPort  = 6443
)

// k3s's default address ranges: the Service CIDR and the cluster (pod) CIDR.
const (
	serviceCIDR = "10.43.0.0/16"
	clusterCIDR = "10.42.0.0/16"
)

// startKube starts etcd and kube-apiserver, writes the kubeconfig and builds the clientset.
func (r *Rig) startKube(ctx context.Context) error {
	if err := r.startEtcd(ctx); err != nil {
		return err
	}
	if err := r.writeAuthFiles(); err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(r.RESTConfig())
	if err != nil {
		return fmt.Errorf("build clientset for %s: %w", r.APIServerURL, err)
	}
	r.kube = kube
	if err := r.startAPIServer(ctx); err != nil {
		return err
	}
	return r.writeKubeconfig()
}

func (r *Rig) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort)
	spec := ProcessSpec{Name: "etcd", Path: "etcd", Args: []string{
		"--name=eovn", "--data-dir=" + r.path("etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=eovn=" + peer,
	}}
	_, err := r.spawn(ctx, spec, httpOK(r.NetnsPath, client+"/health"))
	return err
}

// writeAuthFiles writes the service account signing key and the static token file with one
// admin token in system:masters.
func (r *Rig) writeAuthFiles() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate service account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode service account key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(r.path("sa.key"), keyPEM, 0o600); err != nil {
		return fmt.Errorf("write service account key: %w", err)
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return fmt.Errorf("generate admin token: %w", err)
	}
	r.token = hex.EncodeToString(tok)
	line := r.token + `,admin,admin,"system:masters"` + "\n"
	if err := os.WriteFile(r.path("tokens.csv"), []byte(line), 0o600); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	return nil
}

func (r *Rig) startAPIServer(ctx context.Context) error {
	p, err := r.startChild(r.apiServerSpec())
	if err != nil {
		return err
	}
	return waitReady(ctx, p, apiServerReadyTimeout, r.apiReadyz)
}

// bootAPIServer starts kube-apiserver after a reboot and waits until it answers a list of
// pods: when a kubelet's informer first gets its pods and re-creates their sandboxes. Not
// /readyz, which also waits for the post-start hooks (the system priority classes' polls once
// a second before its first try: /readyz passes a second after the server began serving);
// when /readyz first passes is sent on readyz.
func (r *Rig) bootAPIServer(ctx context.Context, readyz chan<- time.Time) error {
	p, err := r.startChild(r.apiServerSpec())
	if err != nil {
		return err
	}
	err = waitReady(ctx, p, apiServerReadyTimeout, func(ctx context.Context) error {
		_, err := r.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		return err
	})
	if err != nil {
		return err
	}
	go func() {
		if waitReady(ctx, p, apiServerReadyTimeout, r.apiReadyz) == nil {
			readyz <- time.Now()
		}
	}()
	return nil
}

func (r *Rig) apiReadyz(ctx context.Context) error {
	_, err := r.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

func (r *Rig) apiServerSpec() ProcessSpec {
	return ProcessSpec{Name: "kube-apiserver", Path: r.opts.apiServerPath(), Args: []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdClientPort),
		// All of the rig's addresses: 127.0.0.1 for the host side, NodeIP for pods.
		"--bind-address=" + map[bool]string{false: "0.0.0.0", true: "::"}[r.opts.ipv6Primary()],
		"--advertise-address=" + r.advertiseAddress().String(),
		"--secure-port=" + strconv.Itoa(apiServerPort),
		"--cert-dir=" + r.path("apiserver-certs"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + r.path("sa.key"),
		"--service-account-signing-key-file=" + r.path("sa.key"),
		"--token-auth-file=" + r.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + r.opts.serviceCIDRs(),
		// As k3s has it: the kubelet's name resolves nowhere here (exec, logs, port-forward).
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
	}}
}

// writeKubeconfig writes the token kubeconfigs: Kubeconfig for clients inside the rig's
// namespace (edgeovn), PodKubeconfig for clients in pods.
func (r *Rig) writeKubeconfig() error {
	for path, server := range map[string]string{r.Kubeconfig: r.APIServerURL, r.PodKubeconfig: r.PodAPIServerURL} {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["rig"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
		cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: r.token}
		cfg.Contexts["rig"] = &clientcmdapi.Context{Cluster: "rig", AuthInfo: "admin"}
		cfg.CurrentContext = "rig"
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			return fmt.Errorf("write kubeconfig %s: %w", path, err)
		}
	}
	return nil
}

// serviceCIDRs is --service-cluster-ip-range's value: the options' ranges comma-joined, or
// k3s's default.
func (o Options) serviceCIDRs() string {
	if len(o.ServiceCIDRs) == 0 {
		return serviceCIDR
	}
	out := make([]string, len(o.ServiceCIDRs))
	for i, p := range o.ServiceCIDRs {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}

// ipv6Primary reports whether the service range's first family is IPv6: the API server must
// then advertise an IPv6 address (eth0 gets nodeIP6) and listen on IPv6 too.
func (o Options) ipv6Primary() bool {
	return len(o.ServiceCIDRs) > 0 && o.ServiceCIDRs[0].Addr().Is6()
}

// advertiseAddress is the API server's address for pods and the "kubernetes" Service: the
// rig's NodeIP (a cluster's central sets its own), or eth0's IPv6 address (ipv6Primary).
func (r *Rig) advertiseAddress() netip.Addr {
	if r.opts.ipv6Primary() {
		return nodeIP6.Addr()
	}
	return r.NodeIP
}
