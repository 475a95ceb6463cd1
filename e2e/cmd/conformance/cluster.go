package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/images"
)

// nodeName is the cluster's one node.
const nodeName = "conformance-1"

// cluster is one small real cluster on this host: the rig (OVN, etcd, kube-apiserver),
// edgeovn as the package runs it, kube-controller-manager with every default controller,
// kube-scheduler, a real node (kubelet and containerd) and CoreDNS as the cluster DNS, with
// or without kube-proxy.
type cluster struct {
	rig     *harness.Rig
	node    *harness.RealNode
	edgeovn *harness.Process
	// controllers are kube-controller-manager and kube-scheduler: stopped first at teardown,
	// so that no ReplicaSet re-creates the pods the node's drain deletes.
	controllers []*harness.Process
}

// clusterRequest says how to bring a cluster up.
type clusterRequest struct {
	bin       string // edgeovn and edgeovn-cni
	images    []string
	kubeProxy bool
	stack     stack
	keep      bool
	log       *slog.Logger
}

// startCluster brings a cluster up, each part waited for; on failure what started is torn
// down again.
func startCluster(ctx context.Context, req clusterRequest) (*cluster, error) {
	rig, err := harness.Start(ctx, harness.Options{Log: req.log, Keep: req.keep, ServiceCIDRs: req.stack.serviceCIDRs, NodeIPv6: req.stack.dual()})
	if err != nil {
		return nil, err
	}
	c := &cluster{rig: rig}
	if err := c.start(ctx, req); err != nil {
		rig.Stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) start(ctx context.Context, req clusterRequest) error {
	step := func(what string, f func() error) error {
		t0 := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		req.log.Info("cluster: "+what, "took", time.Since(t0).Round(time.Millisecond))
		return nil
	}
	k := daemon.Kubelet(c.rig, nodeName)
	steps := []struct {
		what string
		f    func() error
	}{
		{"edgeovn running, its CNI config written", func() error {
			var err error
			if c.edgeovn, err = daemon.Start(ctx, c.rig, daemon.Spec{Node: nodeName, BinDir: req.bin, Extra: req.stack.edgeovnFlags()}); err != nil {
				return err
			}
			return k.WaitReady(ctx)
		}},
		{"real node Ready", func() error {
			return c.startNode(ctx, nodeRequest{confDir: k.ConfDir, binDir: k.BinDir, images: req.images,
				kubeletExtra: req.stack.kubeletFlags(c.rig.NodeIP, c.rig.NodeIP6)})
		}},
		{"ovn0 bound", func() error { return c.waitHostWired(ctx) }},
		{"controller manager and scheduler running", func() error {
			cm, err := c.rig.StartControllerManager(ctx, harness.ControllerManagerRequest{Controllers: []string{"*"},
				Extra: req.stack.controllerManagerFlags()})
			if err != nil {
				return err
			}
			c.controllers = append(c.controllers, cm)
			sched, err := c.rig.StartScheduler(ctx)
			if err != nil {
				return err
			}
			c.controllers = append(c.controllers, sched)
			return nil
		}},
		{"host traffic to Services: " + mode(req.kubeProxy), func() error { return c.startProxy(ctx, req.kubeProxy, req.stack) }},
		{"CoreDNS Ready behind " + fmt.Sprint(req.stack.dns), func() error { return deployCoreDNS(ctx, c.rig.Kube(), req.stack.dns) }},
	}
	for _, s := range steps {
		if err := step(s.what, s.f); err != nil {
			return err
		}
	}
	return nil
}

// mode names who serves the host's traffic to Services and node ports.
func mode(kubeProxy bool) string {
	if kubeProxy {
		return "kube-proxy serves host traffic to services and node ports"
	}
	return "edgeovn serves host traffic to services and node ports"
}

// nodeRequest says how to start the real node: edgeovn's CNI files, the images to import
// and the kubelet's flags for the stack.
type nodeRequest struct {
	confDir, binDir string
	images          []string
	kubeletExtra    []string
}

// startNode starts the kubelet and containerd on edgeovn's CNI files, with anonymous
// requests to the kubelet allowed (the API server has no client certificate for it, and
// `kubectl exec`, logs and port-forward go through it), and waits until the node is Ready.
func (c *cluster) startNode(ctx context.Context, req nodeRequest) error {
	n, err := c.rig.StartRealNode(ctx, harness.RealNodeRequest{Name: nodeName, CNIConfDir: req.confDir, CNIBinDir: req.binDir,
		Images: req.images, SandboxImage: images.Pause, KubeletExtra: append([]string{"--anonymous-auth=true"}, req.kubeletExtra...)})
	if err != nil {
		return err
	}
	c.node = n
	_, err = n.WaitReady(ctx, "True")
	return err
}

// waitHostWired waits until ovn-controller has bound edgeovn's ovn0: the host (kubelet's
// probes, the API server's proxy) then reaches the pods.
func (c *cluster) waitHostWired(ctx context.Context) error {
	for !daemon.HostInterfaceBound(ctx, c.rig) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// startProxy starts kube-proxy (iptables, k3s's default) when asked, and waits until edgeovn
// logs who serves the host's Service traffic.
func (c *cluster) startProxy(ctx context.Context, kubeProxy bool, s stack) error {
	if kubeProxy {
		if _, err := c.rig.StartKubeProxy(ctx, harness.KubeProxyRequest{Node: nodeName, Extra: s.kubeProxyFlags()}); err != nil {
			return err
		}
	}
	want := mode(kubeProxy)
	for {
		if log, err := c.edgeovnLog(); err == nil && strings.Contains(log, want) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("edgeovn never logged %q: %w", want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *cluster) edgeovnLog() (string, error) {
	b, err := os.ReadFile(c.edgeovn.Log)
	return string(b), err
}

// close tears the cluster down: the controllers first, then the node's pods through the
// kubelet, then every process by PID.
func (c *cluster) close() error {
	var errs []error
	for _, p := range c.controllers {
		errs = append(errs, p.Stop())
	}
	return errors.Join(append(errs, c.rig.Close())...)
}
