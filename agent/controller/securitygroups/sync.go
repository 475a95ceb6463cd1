package securitygroups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/secgroup"
	"github.com/edgeovn/edgeovn/ovn"
)

// Reasons in a SecurityGroup's conditions and Events, and on a pod.
const (
	ReasonReady          = "SecurityGroupReady"
	ReasonInvalidSpec    = "InvalidSpec"
	ReasonRemoteNotFound = "RemoteSecurityGroupNotFound"
	ReasonInUse          = "SecurityGroupInUse"
	ReasonNameTaken      = "PortGroupTaken"
	ReasonApplyError     = "ApplyFailed"
	// ReasonNotFound is on a pod whose annotation names a group that does not exist.
	ReasonNotFound = "SecurityGroupNotFound"
)

// missingPortRetry is when a group whose member has no port yet (its pod is being wired) is
// synced again.
const missingPortRetry = 2 * time.Second

// refusal is a spec edgeovn will not apply as it stands: reported in its status, not retried
// until it changes; the rules applied before stay, the members still follow the pods.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }

// sync brings one group's port group, address sets and ACLs to its spec and members, or holds
// its deletion while another group names it, then removes its rows.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, err := c.groups.Get(name)
	if apierrors.IsNotFound(err) {
		return c.gone(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("get security group %s: %w", name, err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	sg, err := kubeovn.SecurityGroupFrom(u)
	if err != nil {
		return c.writeStatus(ctx, u, &kubeovn.SecurityGroup{}, &refusal{ReasonInvalidSpec, err})
	}
	if sg.DeletionTimestamp != nil {
		return c.deleting(ctx, u, sg)
	}
	if err := c.writer().SetFinalizer(ctx, u, true); err != nil {
		return err
	}
	c.reported.Range(func(k, _ any) bool { // the group exists: a pod naming it may be told again
		if strings.HasSuffix(k.(string), "/"+name) {
			c.reported.Delete(k)
		}
		return true
	})
	ref, err := c.apply(ctx, sg)
	if err != nil {
		_ = c.writeStatus(ctx, u, sg, &refusal{ReasonApplyError, err})
		return err
	}
	return c.writeStatus(ctx, u, sg, ref)
}

// apply writes the group's rows in one transaction: its rules, or when they are refused the
// rules applied before (the fence alone when none were), with its current members.
func (c *Controller) apply(ctx context.Context, sg *kubeovn.SecurityGroup) (*refusal, error) {
	var ref *refusal
	acls, err := secgroup.Rules(secgroup.Group{Name: sg.Name, Spec: sg.Spec, Hosts: c.req.Hosts, Exists: c.exists})
	if err != nil {
		ref = &refusal{ReasonInvalidSpec, err}
		if errors.Is(err, secgroup.ErrRemoteNotFound) {
			ref.reason = ReasonRemoteNotFound
		}
		var found bool
		acls, found, err = c.req.NB.PortGroupACLRules(ctx, secgroup.Owner(sg.Name), secgroup.PortGroupName(sg.Name))
		if errors.Is(err, ovn.ErrNotOwned) {
			return &refusal{ReasonNameTaken, err}, nil
		}
		if err != nil {
			return nil, err
		}
		if !found {
			acls = secgroup.Fence(sg.Name, c.req.Hosts)
		}
	}
	res, err := c.req.NB.EnsureACLGroup(ctx, secgroup.Rows(sg.Name, c.members(sg.Name), acls))
	if errors.Is(err, ovn.ErrNotOwned) {
		return &refusal{ReasonNameTaken, fmt.Errorf("%w (another group's name maps to the same OVN name: rename one)", err)}, nil
	}
	if err != nil {
		return nil, err
	}
	if len(res.Missing) > 0 {
		c.queue.AddAfter(sg.Name, missingPortRetry)
	}
	if res.Wrote {
		if err := c.announce(ctx); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// exists says whether a SecurityGroup of that name exists (and is not being deleted).
func (c *Controller) exists(name string) bool {
	obj, err := c.groups.Get(name)
	if err != nil {
		return false
	}
	u, ok := obj.(*unstructured.Unstructured)
	return ok && u.GetDeletionTimestamp() == nil
}

// members are the pods that name the group and hold a port: their port and addresses.
func (c *Controller) members(name string) []secgroup.Member {
	objs, err := c.byPod.ByIndex(byGroupIndex, name)
	if err != nil {
		return nil
	}
	var out []secgroup.Member
	for _, obj := range objs {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.HostNetwork || !podnet.HoldsNetwork(p) || (c.req.Lost != nil && c.req.Lost(p.Namespace+"/"+p.Name)) {
			continue
		}
		n, err := annotation.Decode(p.Annotations)
		if err != nil {
			continue
		}
		out = append(out, secgroup.Member{Port: p.Name + "." + p.Namespace, IPs: n.IPs})
	}
	return out
}

// deleting holds a deleted group while another group's rule names it (its address sets would
// vanish under that rule); once none does, its rows go and the finalizer is removed.
func (c *Controller) deleting(ctx context.Context, u *unstructured.Unstructured, sg *kubeovn.SecurityGroup) error {
	if named := c.namedBy(sg.Name); len(named) > 0 {
		return c.writeStatus(ctx, u, sg, &refusal{ReasonInUse,
			fmt.Errorf("deletion waits for the security groups whose rules name it in remoteSecurityGroup: %v (change them first)", named)})
	}
	if err := c.gone(ctx, sg.Name); err != nil {
		return err
	}
	return c.writer().SetFinalizer(ctx, u, false)
}

// namedBy lists the other groups with a rule whose remoteSecurityGroup is name.
func (c *Controller) namedBy(name string) []string {
	var out []string
	for _, key := range c.inf.GetStore().ListKeys() {
		obj, err := c.groups.Get(key)
		u, ok := obj.(*unstructured.Unstructured)
		if err != nil || !ok || key == name {
			continue
		}
		sg, err := kubeovn.SecurityGroupFrom(u)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(append(slices.Clone(sg.Spec.IngressRules), sg.Spec.EgressRules...), func(r kubeovn.SecurityGroupRule) bool {
			return r.RemoteType == kubeovn.SgRemoteGroup && r.RemoteSecurityGroup == name
		}) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// reportMissing sends each pod that names the missing group a Warning Event, once.
func (c *Controller) reportMissing(name string) {
	objs, err := c.byPod.ByIndex(byGroupIndex, name)
	if err != nil || c.req.Events == nil {
		return
	}
	for _, obj := range objs {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}
		key := p.Namespace + "/" + p.Name + "/" + name
		if _, done := c.reported.LoadOrStore(key, true); done {
			continue
		}
		c.req.Events.Event(p, corev1.EventTypeWarning, ReasonNotFound, fmt.Sprintf(
			"%s: security group %s not found: the pod is not in it (its other groups apply; it joins once the group exists)",
			annotation.SecurityGroups, name))
	}
}
