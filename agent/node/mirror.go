package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/podwatch"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// ReasonMirrorRefused is the Warning Event on the Node when the mirror cannot be set up
// (its interface name is taken by a link or port that is not edgeovn's).
const ReasonMirrorRefused = "MirrorRefused"

// errMirrorIfaceTaken: the mirror interface's name is a kernel link edgeovn did not make.
var errMirrorIfaceTaken = errors.New("a link of that name exists and is not edgeovn's")

// mirrorResync repairs what was changed behind edgeovn's back (and catches a pod port that
// appeared without a pod event) this often; pod changes and CNI ADDs act at once.
const mirrorResync = 30 * time.Second

// mirror keeps br-int's mirror what the config and this node's pods' ovn.kubernetes.io/mirror
// annotations say: every packet with --enable-mirror, else the annotated pods' ports, else
// nothing (no mirror and no mirror interface).
type mirror struct {
	ovs   *vswitch.Client
	pods  *podwatch.Watcher
	iface string
	all   bool
	log   *slog.Logger
	// kick receives a token after a CNI ADD plugged a port.
	kick <-chan struct{}
	// said is the refusal last reported, so an Event is sent once per distinct cause.
	said string
}

// serveMirror runs the mirror reconciler until ctx ends.
func (r *Role) serveMirror(ctx context.Context, kube *kubeapi.Client, pods *podwatch.Watcher) error {
	m := &mirror{ovs: r.ovs, pods: pods, iface: r.req.MirrorIface, all: r.req.EnableMirror, log: r.log, kick: r.portAdded}
	changed := make(chan struct{}, 1) // any pod's change: the mirror re-reads them all
	if err := pods.OnChange(func(_, _ string) { signal(changed) }); err != nil {
		if ctx.Err() != nil {
			return nil // the informer stopped first
		}
		return fmt.Errorf("watch pods for the mirror: %w", err)
	}
	tick := time.NewTicker(mirrorResync)
	defer tick.Stop()
	for {
		if pods.HasSynced() {
			if err := m.sync(ctx); err != nil && ctx.Err() == nil {
				m.refused(ctx, kube, r.req.NodeName, err)
			} else {
				m.said = ""
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-m.kick:
		case <-tick.C:
		}
	}
}

// spec is the mirror wanted now; ok false: nothing to mirror.
func (m *mirror) spec(ctx context.Context) (vswitch.MirrorSpec, bool, error) {
	spec := vswitch.MirrorSpec{Bridge: Bridge, Name: vswitch.DefaultMirrorName, Output: m.iface, All: m.all}
	if m.all {
		return spec, true, nil
	}
	want := map[string]bool{}
	for _, p := range m.pods.List() {
		if p.Annotations[annotation.Mirror] == "true" {
			want[annotation.PortName(p.Namespace, p.Name)] = true
		}
	}
	if len(want) == 0 {
		return spec, false, nil
	}
	ports, err := m.ovs.Ports(ctx, Bridge)
	if err != nil {
		return spec, false, err
	}
	for _, p := range ports {
		if want[p.IfaceID] {
			spec.Ports = append(spec.Ports, p.Name)
		}
	}
	return spec, true, nil
}

func (m *mirror) sync(ctx context.Context) error {
	spec, ok, err := m.spec(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return m.ovs.DeleteMirror(ctx, spec)
	}
	if err := m.checkLink(ctx); err != nil {
		return err
	}
	if err := m.ovs.SetMirror(ctx, spec); err != nil {
		return err
	}
	return m.linkUp(ctx)
}

// checkLink refuses a mirror interface name a kernel link has already, unless the link is
// edgeovn's own mirror output.
func (m *mirror) checkLink(ctx context.Context) error {
	owned, err := m.ovs.MirrorOutputOwned(ctx, m.iface)
	if err != nil || owned {
		return err
	}
	if _, err := netlink.LinkByName(m.iface); err == nil {
		return fmt.Errorf("mirror interface %s: %w", m.iface, errMirrorIfaceTaken)
	}
	return nil
}

// linkUp sets the mirror device up (ovs-vswitchd creates it down), waiting briefly for it:
// tcpdump cannot open a device that is down.
func (m *mirror) linkUp(ctx context.Context) error {
	deadline := time.Now().Add(3 * time.Second)
	for {
		link, err := netlink.LinkByName(m.iface)
		if err == nil {
			if link.Attrs().Flags&(1<<0) != 0 { // net.FlagUp
				return nil
			}
			if err := netlink.LinkSetUp(link); err != nil {
				return fmt.Errorf("set mirror interface %s up: %w", m.iface, err)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mirror interface %s: ovs-vswitchd has not created it: %w", m.iface, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// refused logs the error and says it in a Warning Event on the Node, once per distinct cause.
func (m *mirror) refused(ctx context.Context, kube *kubeapi.Client, node string, err error) {
	msg := err.Error()
	if msg == m.said {
		return
	}
	m.said = msg
	m.log.Warn("mirror not set up; nothing of it changed", "iface", m.iface, "err", err)
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: node + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node},
		Reason:         ReasonMirrorRefused, Type: corev1.EventTypeWarning, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Message:             "mirror-iface " + m.iface + " (" + annotation.Mirror + " and --enable-mirror) not set up, nothing changed: " + msg,
		Source:              corev1.EventSource{Component: "edgeovn-node", Host: node},
		ReportingController: "edgeovn.io/node", ReportingInstance: node,
	}
	if _, err := kube.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		m.log.Warn("mirror refusal event", "err", err)
	}
}
