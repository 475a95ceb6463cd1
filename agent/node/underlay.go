package node

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// Reasons of a node's Ready condition in a ProviderNetwork's status, Kube-OVN's.
const (
	ReasonBridgeReady  = "InitOVSBridgeSucceeded"
	ReasonBridgeFailed = "InitOVSBridgeFailed"
)

// underlayResync re-checks the provider networks this often besides their changes (a NIC that
// appears later, a failed step).
var underlayResync = 30 * time.Second

// wantedUplink is one provider network on this host: its bridge takes nic.
type wantedUplink struct {
	pn  *kubeovn.ProviderNetwork
	nic string
}

// nodeVerdict is this node's condition in one provider network.
type nodeVerdict struct {
	ready  bool
	reason string
	msg    string
	mtu    int
}

// serveUnderlay wires the ProviderNetworks that apply to this host (underlay.go's rules) from
// a ProviderNetwork informer, on each change and every underlayResync. Without a dynamic client
// nothing is watched. Nothing is given back before the first list arrived: a restart never
// undoes a bridge whose ProviderNetwork is still there.
func (r *Role) serveUnderlay(ctx context.Context, kube *kubeapi.Client) error {
	if r.req.Dynamic == nil {
		return nil
	}
	dyn, err := r.req.Dynamic(ctx)
	if err != nil {
		return fmt.Errorf("provider network client: %w", err)
	}
	gi := kubeapi.DynamicInformer(dyn, kubeovn.ProviderNetworkResource)
	inf := gi.Informer()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if err := inf.SetWatchErrorHandlerWithContext(pnPending(r.log)); err != nil {
		return fmt.Errorf("watch provider networks: %w", err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	}); err != nil {
		return fmt.Errorf("watch provider networks: %w", err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	u := &underlay{r: r, dyn: dyn, kube: kube, node: &ownNode{name: r.req.NodeName, kube: kube, poke: poke}, stopEvents: func() {}}
	defer func() { u.stopEvents() }()
	tick := time.NewTicker(underlayResync)
	defer tick.Stop()
	for {
		u.sync(ctx, gi.Lister())
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
		}
	}
}

// underlay is the node role's provider networks.
type underlay struct {
	r    *Role
	dyn  dynamic.Interface
	kube *kubeapi.Client // Events and the Node's labels (nil: none)
	node *ownNode        // this node's labels (spec.nodeSelector)
	// events records the Warning Events of a node not ready, made at the first one
	// (underlay_status.go).
	events     record.EventRecorder
	stopEvents func()
	mu         sync.Mutex
	// reported is the last verdict written per provider network.
	reported map[string]nodeVerdict
}

// sync brings the host's provider bridges to the ProviderNetworks: gives back the NIC of
// each bridge whose network is gone or excludes this node, takes each wanted NIC, and
// reports this node's condition in each network that applies to it.
func (u *underlay) sync(ctx context.Context, lister cache.GenericLister) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.r
	objs, err := lister.List(labels.Everything())
	if err != nil {
		r.log.Warn("list provider networks", "err", err)
		return
	}
	have, err := r.ovs.ProviderBridges(ctx)
	if err != nil {
		r.log.Warn("list provider bridges", "err", err)
		return
	}
	if len(objs) > 0 {
		if err := u.node.start(ctx); err != nil {
			r.log.Warn("watch this node for the provider networks' nodeSelector", "err", err)
		}
	}
	nodeLabels, known := u.node.labels()
	if !known && anySelector(objs) {
		r.log.Warn("this node's object is not readable: provider networks with spec.nodeSelector cannot be matched, nothing changed on this host", "node", r.req.NodeName)
		return
	}
	wanted, verdicts := u.plan(objs, have, nodeLabels)
	for _, b := range have {
		w, ok := wanted[b.Provider]
		_, bad := verdicts[b.Provider]
		switch {
		case ok && bad: // a bad spec of a wired network: what is wired stays
			continue
		case ok && (len(b.NICs) == 0 || slices.Equal(b.NICs, []string{w.nic})):
			continue
		}
		if err := u.giveBack(ctx, b); err != nil {
			r.log.Warn("give the provider bridge's NIC back", "provider", b.Provider, "bridge", b.Name, "err", err)
		}
	}
	for name, w := range wanted {
		if _, bad := verdicts[name]; bad {
			continue
		}
		verdicts[name] = u.take(ctx, w)
	}
	u.report(ctx, verdicts)
	u.dropConditions(ctx, objs, wanted)
	u.label(ctx, objs, nodeLabels, wanted, verdicts)
}

// plan returns the provider networks this node takes a NIC for, and the verdicts already
// reached (a network refused on this node: bad spec, missing NIC, NIC of another network).
// A NIC already in a provider bridge stays its network's; a free one goes to the oldest
// network that names it (then the first by name).
func (u *underlay) plan(objs []runtime.Object, have []vswitch.ProviderBridge, nodeLabels map[string]string) (map[string]wantedUplink, map[string]nodeVerdict) {
	node := u.r.req.NodeName
	wanted, verdicts := map[string]wantedUplink{}, map[string]nodeVerdict{}
	var pns []*kubeovn.ProviderNetwork
	for _, obj := range objs {
		o, ok := obj.(*unstructured.Unstructured)
		if !ok || o.GetDeletionTimestamp() != nil {
			continue
		}
		pn, err := kubeovn.ProviderNetworkFrom(o)
		if err != nil {
			continue
		}
		pns = append(pns, pn)
	}
	slices.SortFunc(pns, func(a, b *kubeovn.ProviderNetwork) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	byNIC := map[string]string{}
	for _, pn := range pns {
		nic, applies := pn.NodeInterface(node, nodeLabels)
		for _, b := range have {
			if applies && b.Provider == pn.Name && slices.Contains(b.NICs, nic) {
				byNIC[nic] = pn.Name
			}
		}
	}
	for _, pn := range pns {
		nic, applies := pn.NodeInterface(node, nodeLabels)
		if !applies {
			continue
		}
		wanted[pn.Name] = wantedUplink{pn: pn, nic: nic}
		if err := pn.Validate(); err != nil {
			verdicts[pn.Name] = nodeVerdict{reason: ReasonBridgeFailed, msg: err.Error()}
			continue
		}
		if pn.Spec.ExchangeLinkName {
			verdicts[pn.Name] = nodeVerdict{reason: ReasonBridgeFailed, msg: fmt.Sprintf("spec.exchangeLinkName: edgeovn does not rename the host's NIC %s (its bridge is %s): refused on node %s, nothing changed on this host; set it to false", nic, kubeovn.BridgeName(pn.Name), node)}
			continue
		}
		if _, ok := hostnet.LinkMTU(nic); !ok {
			msg := fmt.Sprintf("interface %s not found on node %s (spec.defaultInterface or spec.customInterfaces): nothing changed on this host", nic, node)
			if parent, id, sub := strings.Cut(nic, "."); sub && pn.Spec.AutoCreateVlanSubinterfaces {
				msg = fmt.Sprintf("interface %s not found on node %s and spec.autoCreateVlanSubinterfaces: edgeovn does not create VLAN subinterfaces: nothing changed on this host; create %s on the host, or name %s and put the Subnet on a Vlan with id %s (OVS tags it)", nic, node, nic, parent, id)
			}
			verdicts[pn.Name] = nodeVerdict{reason: ReasonBridgeFailed, msg: msg}
			continue
		}
		if vifs := hostnet.VlanSubinterfaces(nic, pn.Spec.VlanInterfaces, pn.Spec.PreserveVlanInterfaces); len(vifs) > 0 {
			verdicts[pn.Name] = nodeVerdict{reason: ReasonBridgeFailed, msg: fmt.Sprintf("spec.vlanInterfaces/preserveVlanInterfaces: VLAN subinterfaces %s of %s on node %s: edgeovn does not move them onto %s (Kube-OVN does), and they would lose their traffic to the bridge: refused, nothing changed on this host; move their addresses off them or remove the fields",
				strings.Join(vifs, ","), nic, node, kubeovn.BridgeName(pn.Name))}
			continue
		}
		if other, ok := byNIC[nic]; ok && other != pn.Name {
			verdicts[pn.Name] = nodeVerdict{reason: ReasonBridgeFailed, msg: fmt.Sprintf("interface %s on node %s is already the uplink of provider network %s: refused, one NIC serves one provider", nic, node, other)}
			continue
		}
		byNIC[nic] = pn.Name
	}
	return wanted, verdicts
}

// take makes br-<provider> with the NIC as its uplink, moves the host's addresses and routes
// from the NIC to the bridge, and maps the provider to the bridge for ovn-controller.
func (u *underlay) take(ctx context.Context, w wantedUplink) nodeVerdict {
	r := u.r
	br := kubeovn.BridgeName(w.pn.Name)
	fail := func(err error) nodeVerdict { return nodeVerdict{reason: ReasonBridgeFailed, msg: err.Error()} }
	mac := bridgeMAC(hostnet.LinkMAC(w.nic), r.datapath)
	err := r.ovs.EnsureProviderBridge(ctx, vswitch.ProviderBridgeSpec{Provider: w.pn.Name, Name: br, NIC: w.nic,
		DatapathType: r.datapath, Owner: r.req.NodeName, HWAddr: mac})
	if err != nil {
		return fail(err)
	}
	wait, cancel := context.WithTimeout(ctx, bridgeDeviceWait)
	err = hostnet.WaitLink(wait, br)
	if err == nil && mac != nil {
		err = hostnet.WaitMAC(wait, br, mac)
	}
	cancel()
	if err != nil {
		return fail(fmt.Errorf("wait for bridge %s's device: %w", br, err))
	}
	moved, err := hostnet.MoveAddrs(ctx, hostnet.MoveRequest{From: w.nic, To: br, CopyMTU: true, NoDAD: true, Log: r.log})
	if err != nil {
		return fail(err)
	}
	if err := r.ovs.SetBridgeMapping(ctx, w.pn.Name, br); err != nil {
		return fail(err)
	}
	if err := r.ovs.SetChassisMACMapping(ctx, w.pn.Name, chassisMAC(r.req.NodeName, w.pn.Name).String()); err != nil {
		return fail(err)
	}
	return nodeVerdict{ready: true, reason: ReasonBridgeReady, mtu: moved.MTU}
}

// giveBack moves the host's addresses and routes from the bridge back to its NIC, removes the
// provider's mapping and deletes the bridge.
func (u *underlay) giveBack(ctx context.Context, b vswitch.ProviderBridge) error {
	return giveBackBridge(ctx, u.r.ovs, b, u.r.log)
}

// uplinkOVS is what giving a bridge's NIC back needs of the Open_vSwitch database.
type uplinkOVS interface {
	SetBridgeMapping(ctx context.Context, provider, bridge string) error
	SetChassisMACMapping(ctx context.Context, provider, mac string) error
	DeleteProviderBridge(ctx context.Context, name string) error
}

func giveBackBridge(ctx context.Context, ovs uplinkOVS, b vswitch.ProviderBridge, log interface {
	Info(string, ...any)
}) error {
	var errs []error
	if len(b.NICs) > 0 {
		if _, err := hostnet.MoveAddrs(ctx, hostnet.MoveRequest{From: b.Name, To: b.NICs[0]}); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the bridge stays while it holds the host's addresses
	}
	if err := ovs.SetBridgeMapping(ctx, b.Provider, ""); err != nil {
		return err
	}
	if err := ovs.SetChassisMACMapping(ctx, b.Provider, ""); err != nil {
		return err
	}
	if err := ovs.DeleteProviderBridge(ctx, b.Name); err != nil {
		return err
	}
	log.Info("provider bridge removed, its NIC has the host's addresses back", "provider", b.Provider, "bridge", b.Name, "nic", strings.Join(b.NICs, ","))
	return nil
}

// pnPending says once, at Info, that ProviderNetworks are not served yet (the controller
// installs their CRD); other list and watch errors go to client-go's default handler.
func pnPending(log *slog.Logger) cache.WatchErrorHandlerWithContext {
	var said atomic.Bool
	return func(ctx context.Context, r *cache.Reflector, err error) {
		if !apierrors.IsNotFound(err) {
			cache.DefaultWatchErrorHandler(ctx, r, err)
			return
		}
		if said.CompareAndSwap(false, true) {
			log.Info("kubeovn.io/v1 ProviderNetworks are not served yet (the controller installs their CRD): no underlay until they are", "err", err)
		}
	}
}

// bridgeMAC is the provider bridge's MAC: the NIC's, as Kube-OVN gives it, on the kernel
// datapath (where the NIC's frames go to OVS only). On the userspace datapath the kernel still
// receives the NIC's frames beside OVS, so the bridge gets the NIC's MAC with the locally
// administered bit flipped: the same MAC on both would deliver each frame to the host twice.
func bridgeMAC(nic net.HardwareAddr, datapath string) net.HardwareAddr {
	if len(nic) != 6 {
		return nil
	}
	mac := slices.Clone(nic)
	if datapath == vswitch.DatapathNetdev {
		mac[0] ^= 0x02
	}
	return mac
}

// chassisMAC is this host's MAC for routed traffic on provider's network
// (ovn-chassis-mac-mappings): derived from the node and the provider, so a restart keeps it,
// unicast and locally administered. Kube-OVN generates a random one per provider.
func chassisMAC(node, provider string) net.HardwareAddr {
	sum := sha256.Sum256([]byte(node + "/" + provider))
	mac := net.HardwareAddr(sum[:6])
	mac[0] = mac[0]&0xfe | 0x02
	return mac
}
