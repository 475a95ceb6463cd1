package podqos

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// fakePorts records the QoS rows asked for.
type fakePorts struct {
	rows map[string]string
	sets int
}

var _ Ports = (*fakePorts)(nil)

func (f *fakePorts) SetPortQoS(_ context.Context, s vswitch.QoSSpec) error {
	f.sets++
	f.rows[s.Port] = s.Type
	return nil
}

func (f *fakePorts) PortQoSType(_ context.Context, port string) (string, error) {
	return f.rows[port], nil
}

func pod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Annotations: annotations}}
}

// TestShaperRefusesBadAnnotations: bad input is one Warning Event naming it, repeated
// updates with the same input add none, and nothing is written (no OVS row, no qdisc: the
// target does not even exist).
func TestShaperRefusesBadAnnotations(t *testing.T) {
	ports := &fakePorts{rows: map[string]string{}}
	events := record.NewFakeRecorder(10)
	s := New(Request{Ports: ports, MaxRateMbit: 1000, Log: slog.New(slog.DiscardHandler)})
	s.SetEvents(events)
	target := Target{HostIf: "nonexistent_h", Netns: "/nonexistent", IfName: "eth0"}
	bad := pod(map[string]string{IngressRate: "-5", EgressBurst: "1"})
	for range 3 {
		if _, err := s.Apply(context.Background(), bad, target); err != nil {
			t.Fatalf("bad annotations are an Event, not an error: %v", err)
		}
	}
	if len(events.Events) != 1 {
		t.Fatalf("%d events for one bad input applied three times, want 1", len(events.Events))
	}
	ev := <-events.Events
	for _, want := range []string{"Warning " + ReasonInvalid, IngressRate + `="-5"`, EgressBurst + `="1"`, "kept"} {
		if !strings.Contains(ev, want) {
			t.Errorf("event %q does not say %q", ev, want)
		}
	}
	if ports.sets != 0 {
		t.Errorf("%d OVS writes for refused annotations", ports.sets)
	}
	// A pod without limits on a port never shaped costs no write and no netlink call (the
	// target does not exist: one would fail).
	if _, err := s.Apply(context.Background(), pod(nil), target); err != nil || ports.sets != 0 {
		t.Fatalf("unlimited pod: err %v, %d writes", err, ports.sets)
	}
}
