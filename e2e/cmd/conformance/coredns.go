package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/e2e/images"
)

// clusterDNS is k3s's cluster DNS address, the kube-dns Service's ClusterIP (the kubelet's
// clusterDNS in the harness).
const clusterDNS = "10.43.0.10"

// corefile is k3s's Corefile without what needs the outside world or k3s's files (no
// forward: there is no upstream here; no hosts file): the kubernetes plugin reads the API
// server in-cluster, through the "kubernetes" Service.
const corefile = `.:53 {
    errors
    health
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
`

// deployCoreDNS creates CoreDNS as k3s deploys it (ServiceAccount and RBAC, the Corefile in a
// ConfigMap, a Deployment in kube-system, the kube-dns Service at 10.43.0.10) and waits
// until its pod is Ready: its ready plugin answers once the kubernetes plugin has synced.
func deployCoreDNS(ctx context.Context, kube kubernetes.Interface, ips []netip.Addr) error {
	for _, create := range []func(context.Context, kubernetes.Interface) error{
		createCoreDNSRBAC, createCoreDNSConfig, createCoreDNSDeployment,
		func(ctx context.Context, kube kubernetes.Interface) error {
			return createKubeDNSService(ctx, kube, ips)
		},
	} {
		if err := create(ctx, kube); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("deploy coredns: %w", err)
		}
	}
	for {
		d, err := kube.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if err == nil && d.Status.ReadyReplicas == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("coredns not Ready: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

var coreDNSLabels = map[string]string{"k8s-app": "kube-dns"}

func createCoreDNSRBAC(ctx context.Context, kube kubernetes.Interface) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"}}
	if _, err := kube.CoreV1().ServiceAccounts("kube-system").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	}}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:coredns"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "coredns", Namespace: "kube-system"}}}
	_, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}

func createCoreDNSConfig(ctx context.Context, kube kubernetes.Interface) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"}, Data: map[string]string{"Corefile": corefile}}
	_, err := kube.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{})
	return err
}

func createCoreDNSDeployment(ctx context.Context, kube kubernetes.Interface) error {
	one := int32(1)
	pod := corev1.PodSpec{
		ServiceAccountName: "coredns",
		DNSPolicy:          corev1.DNSDefault,
		PriorityClassName:  "system-cluster-critical",
		Containers: []corev1.Container{{
			Name: "coredns", Image: images.CoreDNS, ImagePullPolicy: corev1.PullNever,
			Args: []string{"-conf", "/etc/coredns/Corefile"},
			Ports: []corev1.ContainerPort{{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
				{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP}},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 2, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}}},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"}}}}},
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", Labels: coreDNSLabels},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: coreDNSLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: coreDNSLabels}, Spec: pod}}}
	_, err := kube.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{})
	return err
}

// createKubeDNSService creates kube-dns at the ClusterIPs given, one per family: with two,
// PreferDualStack, as k3s's manifest has it on a dual-stack cluster.
func createKubeDNSService(ctx context.Context, kube kubernetes.Interface, ips []netip.Addr) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: coreDNSLabels},
		Spec: corev1.ServiceSpec{ClusterIP: ips[0].String(), Selector: coreDNSLabels, Ports: []corev1.ServicePort{
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP}}}}
	if len(ips) > 1 {
		policy := corev1.IPFamilyPolicyPreferDualStack
		svc.Spec.IPFamilyPolicy = &policy
		for _, ip := range ips {
			svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, ip.String())
		}
	}
	_, err := kube.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{})
	return err
}
