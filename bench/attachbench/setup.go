package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

var (
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nadResource = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
)

// setUp installs the NAD CRD, the Subnets att-a and att-b (providers a.default.ovn,
// b.default.ovn) and the NADs a and b; it returns each NAD's config as Multus hands it over.
func setUp(ctx context.Context, rig *harness.Rig, crdPath string) (map[string][]byte, error) {
	dyn, err := dynamic.NewForConfig(rig.RESTConfig())
	if err != nil {
		return nil, err
	}
	crd, err := os.ReadFile(crdPath)
	if err != nil {
		return nil, err
	}
	if err := create(ctx, dyn.Resource(crdResource), "", string(crd)); err != nil {
		return nil, err
	}
	for _, s := range []string{"a:172.17", "b:172.18"} {
		name, net := s[:1], s[2:]
		doc := fmt.Sprintf("apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: att-%s\nspec:\n  protocol: IPv4\n  cidrBlock: %s.0.0/16\n  gateway: %s.0.1\n  provider: %s.default.ovn\n", name, net, net, name)
		if err := create(ctx, dyn.Resource(kubeovn.SubnetResource), "", doc); err != nil {
			return nil, err
		}
	}
	sock := daemon.Socket(rig) // the rig's daemon socket; a node's is the plugin's default
	nets := map[string][]byte{}
	for _, name := range []string{"a", "b"} {
		conf := fmt.Sprintf(`{"cniVersion":"0.3.1","name":%q,"type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":"%s.default.ovn","serverSocket":%q}`, name, name, sock)
		nets[name] = []byte(conf)
		doc := fmt.Sprintf("apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata:\n  name: %s\nspec:\n  config: '%s'\n", name, conf)
		if err := create(ctx, dyn.Resource(nadResource), "default", doc); err != nil {
			return nil, err
		}
	}
	time.Sleep(time.Second) // the Subnets applied (untimed)
	return nets, nil
}

// create creates the object doc describes, retrying while its resource is not served yet.
func create(ctx context.Context, res dynamic.NamespaceableResourceInterface, ns, doc string) error {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return err
	}
	for {
		var err error
		if ns == "" {
			_, err = res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		} else {
			_, err = res.Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create %v: %w", obj["metadata"], err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// multusKubelet is k with Multus as the node's CNI, delegating the cluster network to
// edgeovn's conflist and each NAD to the plugin it names.
func multusKubelet(ctx context.Context, rig *harness.Rig, k *podsim.Kubelet, bin string) (*podsim.Kubelet, error) {
	own, err := k.ConfList(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(rig.Dir, "multus-")
	if err != nil {
		return nil, err
	}
	binDir, confDir := filepath.Join(dir, "bin"), filepath.Join(dir, "net.d")
	for _, d := range []string{binDir, confDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	bin, err = filepath.Abs(bin) // a relative target would be read from binDir
	if err != nil {
		return nil, fmt.Errorf("multus plugin path: %w", err)
	}
	links := map[string]string{"multus": bin}
	for _, name := range []string{"edgeovn", "kube-ovn", "loopback"} {
		links[name] = filepath.Join(k.BinDir, name)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(binDir, name)); err != nil {
			return nil, err
		}
	}
	var delegate map[string]any
	if err := json.Unmarshal(own.Bytes, &delegate); err != nil {
		return nil, err
	}
	conf, err := json.Marshal(map[string]any{"cniVersion": "1.0.0", "name": "multus-cni-network", "plugins": []any{map[string]any{
		"type": "multus", "kubeconfig": rig.Kubeconfig, "binDir": binDir, "cniDir": filepath.Join(dir, "multus"),
		"logFile": filepath.Join(dir, "multus.log"), "logLevel": "error", "delegates": []any{delegate},
	}}})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(confDir, "00-multus.conflist"), conf, 0o644); err != nil {
		return nil, err
	}
	mk := *k
	mk.BinDir, mk.ConfDir, mk.CacheDir = binDir, confDir, filepath.Join(dir, "cache")
	return &mk, nil
}
