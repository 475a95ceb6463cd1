package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/annotation"
)

// noteNetworkError writes why the pod's networks cannot be allocated where its node reads it
// (annotation.NetworkErrorKey): the pod's CNI ADD then fails at once with that reason.
func (c *Controller) noteNetworkError(ctx context.Context, pod *corev1.Pod, msg string) error {
	return c.annotate(ctx, pod, map[string]string{annotation.NetworkErrorKey: msg})
}

// clearNetworkError removes the pod's network error once its networks resolve, before
// anything is allocated or annotated, so a node never reads an old reason beside a new
// allocation.
func (c *Controller) clearNetworkError(ctx context.Context, pod *corev1.Pod) error {
	patch, err := annotation.RemovePatch(pod.Annotations, annotation.NetworkErrorKey)
	if err != nil || patch == nil {
		return err
	}
	_, err = c.req.Kube.Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clear the network error of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
