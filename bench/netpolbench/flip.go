package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// labelFlips runs a server and a client pod in namespace "probe", fences the server with a
// policy that admits role=client, and relabels the client back and forth: each time from
// the API's answer to the first probe that gets through (allow: probes started every
// benchkit.ProbeEvery in parallel) or is dropped (deny: probes one after the other).
func (b *bench) labelFlips(ctx context.Context, k *podsim.Kubelet, flips int) (allow, deny []time.Duration, err error) {
	if err := b.namespace(ctx, "probe", nil); err != nil {
		return nil, nil, err
	}
	server, err := b.sandbox(ctx, k, "server", map[string]string{"app": "server"})
	if err != nil {
		return nil, nil, err
	}
	client, err := b.sandbox(ctx, k, "client", map[string]string{"role": "none"})
	if err != nil {
		return nil, nil, err
	}
	if err := listen(server); err != nil {
		return nil, nil, err
	}
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "probe", Name: "admit-clients"},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "server"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}}}}}}}}
	if _, err := b.kube.NetworkingV1().NetworkPolicies("probe").Create(ctx, np, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("create probe policy: %w", err)
	}
	to := netip.AddrPortFrom(server.IP(), 80)
	if _, err := benchkit.ProbeUntil(ctx, client, to, false); err != nil {
		return nil, nil, err
	}
	for range flips {
		for _, want := range []bool{true, false} {
			role := map[bool]string{true: "client", false: "none"}[want]
			start := time.Now()
			patch := fmt.Appendf(nil, `{"metadata":{"labels":{"role":%q}}}`, role)
			if _, err := b.kube.CoreV1().Pods("probe").Patch(ctx, "client", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return nil, nil, fmt.Errorf("relabel client: %w", err)
			}
			var at time.Time
			if want { // within ProbeEvery of the opening, not up to a dropped probe's timeout late
				at, err = benchkit.ProbeOpened(ctx, client, to)
			} else {
				at, err = benchkit.ProbeUntil(ctx, client, to, false)
			}
			if err != nil {
				return nil, nil, err
			}
			if want {
				allow = append(allow, at.Sub(start))
			} else {
				deny = append(deny, at.Sub(start))
			}
		}
	}
	return allow, deny, nil
}

func (b *bench) sandbox(ctx context.Context, k *podsim.Kubelet, name string, labels map[string]string) (*podsim.Sandbox, error) {
	if err := b.pod(ctx, "probe", name, labels); err != nil {
		return nil, err
	}
	pod, err := b.kube.CoreV1().Pods("probe").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read pod probe/%s: %w", name, err)
	}
	sb, err := k.RunSandbox(ctx, pod)
	if err != nil {
		return nil, err
	}
	return sb, nil
}

// listen accepts and closes TCP connections on port 80 in the sandbox's namespace.
func listen(sb *podsim.Sandbox) error {
	return ns.WithNetNSPath(sb.Netns, func(ns.NetNS) error {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(sb.IP(), 80).String())
		if err != nil {
			return fmt.Errorf("listen in %s: %w", sb.Pod.Name, err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return nil
	})
}
