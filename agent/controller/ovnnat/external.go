package ovnnat

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

var configMapResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// gwConfig is what edgeovn reads of kube-system/ovn-external-gw-config.
type gwConfig struct {
	nodes   []string // external-gw-nodes
	fipType string   // type: centralized (default) or distributed
}

// gatewayConfig reads the ConfigMap (a GET per use: it changes rarely and edgeovn keeps no
// ConfigMap informer for it).
func (c *Controller) gatewayConfig(ctx context.Context) (gwConfig, *refusal) {
	cfg := gwConfig{fipType: kubeovn.GWCentralized}
	u, err := c.req.Dynamic.Resource(configMapResource).Namespace("kube-system").Get(ctx, kubeovn.ExternalGatewayConfig, metav1.GetOptions{})
	if err != nil {
		return cfg, refuse(ReasonNoGateway, "enableExternal: ConfigMap kube-system/%s with external-gw-nodes is required: %v", kubeovn.ExternalGatewayConfig, err)
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	if data["type"] == kubeovn.GWDistributed {
		cfg.fipType = kubeovn.GWDistributed
	}
	for _, n := range strings.Split(data["external-gw-nodes"], ",") {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(cfg.nodes, n) {
			cfg.nodes = append(cfg.nodes, n)
		}
	}
	if data["enable-external-gw"] == "false" || len(cfg.nodes) == 0 {
		return cfg, refuse(ReasonNoGateway, "enableExternal: ConfigMap kube-system/%s names no external-gw-nodes (or enable-external-gw is false)", kubeovn.ExternalGatewayConfig)
	}
	return cfg, nil
}

func lrpEipName(vpc string) string { return vpc + "-" + kubeovn.ExternalSubnet }

// lrpEipLabel marks the router EIPs edgeovn created, the only ones it deletes.
const lrpEipLabel = "edgeovn.io/vpc-external"

// syncVpc links a custom Vpc with enableExternal to the external Subnet as Kube-OVN does: the
// OvnEip "<vpc>-external" (type lrp) holds the router port's address, the port
// "<vpc>-external" has every external-gw-nodes host as a gateway chassis (the first the
// highest priority: OVN fails over to the next when it is down), and the
// router's default route goes to the external Subnet's gateway. A Vpc without it (or gone)
// loses exactly these rows and that EIP.
func (c *Controller) syncVpc(ctx context.Context, name string) error {
	u, err := c.get("vpc", name)
	if err != nil {
		return err
	}
	var v kubeovn.Vpc
	if u != nil {
		if err := kubeovn.FromObject(u, &v); err != nil {
			return err
		}
	}
	if u == nil || v.DeletionTimestamp != nil || !v.Spec.EnableExternal || name == kubeovn.DefaultVpc {
		return c.unlinkVpc(ctx, name, u)
	}
	if !c.gate.isOpen() {
		c.gate.poke() // opening queues every Vpc again
		return nil
	}
	spec, ref := c.externalSpec(ctx, name)
	if ref == nil && spec == nil {
		return nil // the router's EIP is being allocated: its status change queues the Vpc again
	}
	if ref == nil {
		if err := c.req.NB.EnsureExternalPort(ctx, *spec); err != nil {
			ref = refuse(ReasonApplyError, "enableExternal: %v", err)
		}
	}
	if ref != nil && c.req.Events != nil {
		c.req.Events.Event(u, corev1.EventTypeWarning, ref.reason, ref.Error())
		c.log.Warn("vpc external link refused", "vpc", name, "err", ref.err)
	}
	return c.vpcExternalStatus(ctx, u, v.Status.EnableExternal, ref == nil)
}

// externalSpec is the Vpc's external link, nil while its EIP is not ready.
func (c *Controller) externalSpec(ctx context.Context, vpc string) (*northbound.ExternalPortSpec, *refusal) {
	cfg, ref := c.gatewayConfig(ctx)
	if ref != nil {
		return nil, ref
	}
	cidrs, gw, ref := c.externalSubnet(kubeovn.ExternalSubnet, "enableExternal")
	if ref != nil {
		return nil, ref
	}
	eu, err := c.get("eip", lrpEipName(vpc))
	if err != nil {
		return nil, refuse(ReasonApplyError, "enableExternal: %v", err)
	}
	if eu == nil {
		return nil, c.createLrpEip(ctx, vpc)
	}
	var e kubeovn.OvnEip
	if err := kubeovn.FromObject(eu, &e); err != nil {
		return nil, refuse(ReasonApplyError, "enableExternal: %v", err)
	}
	ip, err := netip.ParseAddr(e.Status.V4Ip)
	mac, merr := net.ParseMAC(e.Status.MacAddress)
	if !e.Status.Ready || err != nil || merr != nil {
		return nil, nil
	}
	return &northbound.ExternalPortSpec{Router: vpc, Switch: kubeovn.ExternalSubnet, Network: netip.PrefixFrom(ip, cidrs[0].Bits()),
		MAC: mac, Chassis: cfg.nodes, Gateway: gw, Owner: northbound.OwnerRef{Kind: ovn.KindVpcExternal, Name: vpc}}, nil
}

// createLrpEip creates the router's OvnEip, as Kube-OVN's createOrUpdateOvnEipCR does.
func (c *Controller) createLrpEip(ctx context.Context, vpc string) *refusal {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeovn.io/v1", "kind": "OvnEip",
		"metadata": map[string]any{"name": lrpEipName(vpc), "labels": map[string]any{"ovn.kubernetes.io/subnet": kubeovn.ExternalSubnet, "ovn.kubernetes.io/vpc": vpc, lrpEipLabel: vpc}},
		"spec":     map[string]any{"externalSubnet": kubeovn.ExternalSubnet, "type": kubeovn.EipTypeLrp},
	}}
	if _, err := c.req.Dynamic.Resource(kubeovn.OvnEipResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return refuse(ReasonApplyError, "enableExternal: create ovn eip %s: %v", lrpEipName(vpc), err)
	}
	return nil
}

// unlinkVpc removes the Vpc's external link and the router EIP edgeovn created for it; for a Vpc that is gone, its
// router too (the Vpc's own deletion kept the router while the link was on it).
func (c *Controller) unlinkVpc(ctx context.Context, name string, u *unstructured.Unstructured) error {
	n, err := c.req.NB.DeleteOwned(ctx, northbound.OwnerRef{Kind: ovn.KindVpcExternal, Name: name})
	if err != nil {
		return err
	}
	if n > 0 {
		c.log.Info("vpc external link removed", "vpc", name, "rows", n)
	}
	if eu, _ := c.get("eip", lrpEipName(name)); eu != nil && eu.GetDeletionTimestamp() == nil && eu.GetLabels()[lrpEipLabel] == name {
		if err := c.req.Dynamic.Resource(kubeovn.OvnEipResource).Delete(ctx, eu.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete ovn eip %s: %w", eu.GetName(), err)
		}
	}
	if u == nil {
		if n > 0 {
			if _, err := c.req.NB.DeleteOwned(ctx, northbound.OwnerRef{Kind: ovn.KindVpc, Name: name}); err != nil {
				return err
			}
		}
		return nil
	}
	var v kubeovn.Vpc
	_ = kubeovn.FromObject(u, &v)
	return c.vpcExternalStatus(ctx, u, v.Status.EnableExternal, false)
}

// vpcExternalStatus patches status.enableExternal (the Vpcs' own status writer keeps it).
func (c *Controller) vpcExternalStatus(ctx context.Context, u *unstructured.Unstructured, have, want bool) error {
	if have == want {
		return nil
	}
	if err := c.writer("vpc").PatchStatus(ctx, u.GetName(), map[string]any{"enableExternal": want}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
