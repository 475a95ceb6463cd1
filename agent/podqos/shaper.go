package podqos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// Reasons of the Warning Events on a pod whose QoS annotations are not (all) applied.
const (
	// ReasonInvalid: an annotation is bad; nothing of the pod's QoS changed.
	ReasonInvalid = "QoSInvalid"
	// ReasonNetemUnsupported: the kernel has no netem; the rates were applied, netem not.
	ReasonNetemUnsupported = "NetemUnsupported"
)

// Ports is the part of the Open_vSwitch client the Shaper uses.
type Ports interface {
	SetPortQoS(ctx context.Context, spec vswitch.QoSSpec) error
	PortQoSType(ctx context.Context, port string) (string, error)
}

var _ Ports = (*vswitch.Client)(nil)

// Target is a pod's wired primary interface: the host end (also its OVS port's name) in the
// node's namespace, and the pod's end in the pod's namespace.
type Target struct {
	HostIf, Netns, IfName string
}

// Request configures a Shaper.
type Request struct {
	Ports Ports
	// MaxRateMbit is the largest rate accepted (the host's link speed); 0: DefaultMaxRateMbit.
	MaxRateMbit float64
	Log         *slog.Logger
}

// Shaper applies pods' QoS annotations to their interfaces. Safe for concurrent use: one
// pod's application at a time.
type Shaper struct {
	ports   Ports
	maxMbit float64
	log     *slog.Logger

	mu      sync.Mutex
	events  record.EventRecorder
	applied map[string]appliedLimits // by host interface
	said    map[string]string        // pod key + reason -> the warning last sent
}

type appliedLimits struct {
	pod    string
	limits Limits
}

// New returns a Shaper.
func New(r Request) *Shaper {
	if r.MaxRateMbit <= 0 {
		r.MaxRateMbit = DefaultMaxRateMbit
	}
	return &Shaper{ports: r.Ports, maxMbit: r.MaxRateMbit, log: r.Log,
		applied: map[string]appliedLimits{}, said: map[string]string{}}
}

// SetEvents gives the Shaper a recorder for its Warning Events (once the API client exists).
func (s *Shaper) SetEvents(e record.EventRecorder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = e
}

// Apply makes t's shaping what pod's annotations ask for. Bad annotations change nothing
// (the limits in force stay) and are reported in a Warning Event on the pod, as is netem on
// a kernel without it (the rates are applied then). An error is a failure to apply.
//
// recheck asks the caller to Apply again in a while: the port had no QoS row until now, and
// ovs-vswitchd, which resets the root qdisc of a port without one, may have been in the
// middle of a reconfiguration that read the database before the row was written (a port
// created for a pod with QoS annotations has its row from the start: PortQoS).
func (s *Shaper) Apply(ctx context.Context, pod *corev1.Pod, t Target) (recheck bool, err error) {
	key := pod.Namespace + "/" + pod.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	lim, err := Parse(pod.Annotations, s.maxMbit)
	if err != nil {
		s.warn(pod, ReasonInvalid, fmt.Sprintf("%v; the pod's bandwidth limits in force are kept", err))
		return false, nil
	}
	delete(s.said, key+"|"+ReasonInvalid)
	prev, known := s.applied[t.HostIf]
	if known && prev.pod == key && prev.limits == lim {
		return false, nil
	}
	on := lim != Limits{}
	row, err := s.ports.PortQoSType(ctx, t.HostIf)
	if err != nil {
		return false, err
	}
	if row == "" && !on {
		// Never shaped (the row, once there, stays with the port): a pod without limits
		// costs no netlink round trip into its namespace.
		s.applied[t.HostIf] = appliedLimits{pod: key, limits: lim}
		return false, nil
	}
	// The port's linux-noop QoS row keeps ovs-vswitchd from resetting the host end's qdisc
	// (and marks the port shaped for a restart): it comes before the shaping.
	if row == "" {
		if err := s.ports.SetPortQoS(ctx, vswitch.QoSSpec{Port: t.HostIf, Type: vswitch.QoSTypeNoop}); err != nil {
			return false, err
		}
	}
	in, err := applyShape(device{Name: t.HostIf}, shape{Rate: lim.Ingress})
	if err != nil {
		return false, fmt.Errorf("pod ingress: %w", err)
	}
	out, err := s.applyEgress(pod, t, lim)
	if err != nil {
		return false, err
	}
	if in || out || row == "" { // a restart that finds everything right says nothing
		s.log.Info("pod qos applied", "pod", pod.Name, "namespace", pod.Namespace, "port", t.HostIf,
			"ingress_bps", lim.Ingress.BitsPerSec, "egress_bps", lim.Egress.BitsPerSec, "netem", lim.Netem.On())
	}
	if row == "" {
		delete(s.applied, t.HostIf) // the recheck applies again in full
		return true, nil
	}
	s.applied[t.HostIf] = appliedLimits{pod: key, limits: lim}
	return false, nil
}

// Wanted reports whether the annotations name any QoS setting (valid or not): the pod's
// port is then created with its QoS row (PortQoS).
func Wanted(annotations map[string]string) bool {
	for _, k := range []string{IngressRate, EgressRate, IngressBurst, EgressBurst, Latency, Jitter, Limit, Loss} {
		if _, ok := annotations[k]; ok {
			return true
		}
	}
	return false
}

// applyEgress shapes what the pod sends, in the pod's namespace, with netem where the
// kernel has it.
func (s *Shaper) applyEgress(pod *corev1.Pod, t Target, lim Limits) (changed bool, err error) {
	pd := device{Netns: t.Netns, Name: t.IfName}
	changed, err = applyShape(pd, shape{Rate: lim.Egress, Netem: lim.Netem})
	if errors.Is(err, ErrNoNetem) {
		s.warn(pod, ReasonNetemUnsupported, fmt.Sprintf("annotations %s, %s, %s, %s not applied: %v (the bandwidth limits are)",
			Latency, Jitter, Limit, Loss, err))
		changed, err = applyShape(pd, shape{Rate: lim.Egress})
	}
	if err != nil {
		return false, fmt.Errorf("pod egress: %w", err)
	}
	return changed, nil
}

// Forget drops what is known of the pod (it is gone).
func (s *Shaper) Forget(namespace, name string) {
	key := namespace + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	for port, a := range s.applied {
		if a.pod == key {
			delete(s.applied, port)
		}
	}
	for _, r := range []string{ReasonInvalid, ReasonNetemUnsupported} {
		delete(s.said, key+"|"+r)
	}
}

// warn logs and records a Warning Event, once while the message stays the same.
func (s *Shaper) warn(pod *corev1.Pod, reason, msg string) {
	k := pod.Namespace + "/" + pod.Name + "|" + reason
	if s.said[k] == msg {
		return
	}
	s.said[k] = msg
	s.log.Warn("pod qos not applied", "pod", pod.Name, "namespace", pod.Namespace, "reason", reason, "err", msg)
	if s.events != nil {
		s.events.Event(pod, corev1.EventTypeWarning, reason, msg)
	}
}
