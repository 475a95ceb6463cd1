package realpods

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestServerDeployment is a Deployment of replicas testserver pods (TestServerPod's spec),
// labelled app=name, bound to node by the template's nodeName, so no scheduler is needed.
func TestServerDeployment(namespace, name, node string, replicas int32) *appsv1.Deployment {
	pod := TestServerPod(namespace, name, node)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
}

// CreateDeployment creates the Deployment, and first its namespace's default ServiceAccount
// (see Create).
func CreateDeployment(ctx context.Context, kube kubernetes.Interface, d *appsv1.Deployment) error {
	if err := ensureServiceAccount(ctx, kube, d.Namespace); err != nil {
		return err
	}
	if _, err := kube.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}

// WaitAll polls the pods labelled app=app until there are want of them and cond holds for
// each, and returns them; it fails when ctx ends, saying each pod's status.
func WaitAll(ctx context.Context, kube kubernetes.Interface, namespace, app string, want int, cond func(*corev1.Pod) bool) ([]corev1.Pod, error) {
	sel := metav1.ListOptions{LabelSelector: "app=" + app}
	var last *corev1.PodList // the last list read, for the error
	for {
		list, err := kube.CoreV1().Pods(namespace).List(ctx, sel)
		if err == nil {
			last = list
			if len(list.Items) == want && allHold(list.Items, cond) {
				return list.Items, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("pods app=%s in %s: %w (want %d; last: %s)", app, namespace, ctx.Err(), want, describeAll(last))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func allHold(pods []corev1.Pod, cond func(*corev1.Pod) bool) bool {
	for i := range pods {
		if !cond(&pods[i]) {
			return false
		}
	}
	return true
}

func describeAll(list *corev1.PodList) string {
	if list == nil {
		return "no list"
	}
	s := ""
	for i := range list.Items {
		s += fmt.Sprintf("\n  %s: %s", list.Items[i].Name, describe(&list.Items[i]))
	}
	return s
}
