package controller

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/southbound"
)

// nodeOwner is the IPAM owner of a node's join address; no pod key has a colon.
func nodeOwner(node string) ipam.Owner {
	return ipam.Owner{Pod: nodeOwnerPrefix + node, Interface: "ovn0"}
}

const nodeOwnerPrefix = "node:"

// syncNode gives a node its join address, its port on the join switch and the distributed
// gateway's policies (its pods' outside traffic leaves through it), then its annotations,
// which the node role turns into ovn0. A deleted node gives everything back.
func (c *Controller) syncNode(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	if apierrors.IsNotFound(err) {
		return c.deleteNode(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	req := ipam.Request{Subnet: kubeovn.JoinSubnet, Owner: nodeOwner(name)}
	if n, err := annotation.Decode(node.Annotations); err == nil && n.Switch == kubeovn.JoinSubnet {
		req.IPs, req.MAC = n.IPs, n.MAC // adopt what the node already carries
	}
	a, err := c.ipam.Allocate(ctx, req)
	if errors.Is(err, ipam.ErrConflict) && req.IPs != nil {
		// The annotation is edgeovn's own record, not a user's pin: an address that another
		// node won at reconciliation is replaced, and the annotation with it.
		c.log.Warn("node's annotated join address is taken, allocating another", "node", name, "ip", req.IPs, "err", err)
		req.IPs, req.MAC = nil, nil
		a, err = c.ipam.Allocate(ctx, req)
	}
	if err != nil {
		return fmt.Errorf("allocate join address of node %s: %w", name, err)
	}
	spec := northbound.NodeSpec{Name: name, Router: c.req.Router, JoinSwitch: kubeovn.JoinSubnet, MAC: a.MAC}
	for _, ip := range a.IPs {
		if ip.Is4() {
			spec.JoinIP, spec.NodeIP = ip, annotation.NodeInternalIP(node)
		} else {
			spec.JoinIP6 = ip
		}
	}
	if spec.PodIPs, err = c.podIPsOn(name, spec.JoinIP.IsValid(), spec.JoinIP6.IsValid()); err != nil {
		return err
	}
	if err := c.nb.EnsureNode(ctx, spec); err != nil {
		return err
	}
	return c.annotateNode(ctx, node, a)
}

// chassisRemover removes a gone node's chassis (named after the node) from the southbound.
type chassisRemover interface {
	DeleteChassis(ctx context.Context, name string) (bool, error)
}

var _ chassisRemover = (*southbound.Client)(nil)

// deleteNode removes a deleted node's rows from OVN and its chassis from the southbound (so
// the other hosts drop their tunnels to it), then releases its join address.
func (c *Controller) deleteNode(ctx context.Context, name string) error {
	n, err := c.nb.DeleteOwned(ctx, northbound.OwnerRef{Kind: ovn.KindNode, Name: name})
	if err != nil {
		return err
	}
	if c.chassis != nil {
		gone, err := c.chassis.DeleteChassis(ctx, name)
		if err != nil {
			return err
		}
		if gone {
			c.log.Info("chassis of deleted node removed", "node", name)
		}
	}
	_, held := c.ipam.Get(nodeOwner(name))
	if err := c.ipam.Release(ctx, nodeOwner(name)); err != nil {
		return fmt.Errorf("release join address of node %s: %w", name, err)
	}
	if n > 0 || held {
		c.log.Info("node removed", "node", name, "rows", n)
	}
	return nil
}

// byNodeIndex indexes pods by spec.nodeName.
const byNodeIndex = "node"

func podNodeName(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// podIPsOn lists the addresses of the pods on node that hold an address, sorted, of the
// families the node has a join address of (v4, v6): their outside traffic leaves through it.
func (c *Controller) podIPsOn(node string, v4, v6 bool) ([]netip.Addr, error) {
	objs, err := c.podsByNode.ByIndex(byNodeIndex, node)
	if err != nil {
		return nil, fmt.Errorf("list pods of node %s: %w", node, err)
	}
	var ips []netip.Addr
	for _, obj := range objs {
		p, ok := obj.(*corev1.Pod)
		if !ok || !podnet.HoldsNetwork(p) {
			continue
		}
		if a, ok := c.ipam.Get(owner(p.Namespace + "/" + p.Name)); ok && !c.subnets.OnPhysicalGateway(a.Subnet) {
			for _, ip := range a.IPs {
				if ip.Is4() && v4 || ip.Is6() && v6 {
					ips = append(ips, ip)
				}
			}
		}
	}
	slices.SortFunc(ips, netip.Addr.Compare)
	return ips, nil
}

// annotateNode writes Kube-OVN's node annotations for the join port, if they differ.
func (c *Controller) annotateNode(ctx context.Context, node *corev1.Node, a ipam.Allocation) error {
	want := annotation.Encode(annotation.Network{Switch: kubeovn.JoinSubnet, IPs: a.IPs, MAC: a.MAC,
		CIDRs: c.req.JoinCIDRs(), Gateways: c.req.JoinGateways()})
	want[annotation.PortNameKey] = northbound.NodePortName(node.Name)
	patch, err := annotation.Patch(node.Annotations, want)
	if err != nil || patch == nil {
		return err
	}
	_, err = c.req.Kube.Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its delete event gives the address back
	}
	return fmt.Errorf("annotate node %s: %w", node.Name, err)
}
