package e2e

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// checkSourceRanges (TestLoadBalancerIPs): a LoadBalancer Service with
// loadBalancerSourceRanges admits, on its LoadBalancer IP, the site client in them
// (192.0.2.20/32, the LAN peer's second address) and drops the other (192.0.2.1) and a pod
// (the pod network is not in them); an entry that does not parse (010.9.0.0/16, which the API
// server's legacy validation lets through) is a SourceRangeInvalid Event naming it, and the
// rest of the Service holds: the allowed client still passes, and its external IP, which
// source ranges do not restrict (as with kube-proxy), answers every client.
func (s *lbEnv) checkSourceRanges(t *testing.T) {
	allowed, other := harness.LANPeerIP, netip.MustParseAddr("192.0.2.1")
	s.lbService(t, "lb-ranges", func(svc *corev1.Service) {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		svc.Spec.ExternalIPs = []string{extRanges}
		svc.Spec.LoadBalancerSourceRanges = []string{allowed.String() + "/32", "010.9.0.0/16"}
	}, corev1.LoadBalancerIngress{IP: lbRanges})
	send := func(netns string, from netip.Addr, addr string) (podsim.Answer, error) {
		return podsim.Send(s.ctx, podsim.SendRequest{Netns: netns, From: from, Protocol: corev1.ProtocolTCP,
			Addr: netip.MustParseAddrPort(addr), Timeout: time.Second})
	}
	s.eventually(t, "the LoadBalancer IP answers the client in the source ranges", func() bool {
		a, _ := send(s.site, allowed, lbRanges+":80")
		return a.Server == "web-1"
	})
	if got := s.reaches(t, s.site, extRanges+":80"); got != s.join {
		t.Errorf("the Service's external IP from %s: web-1 saw %s, want the join address (external IPs are not restricted)", other, got)
	}
	client := runPodIn(s.ctx, t, s.env, "default", "ranges-client")
	for i := range 3 {
		if a, err := send(s.site, other, lbRanges+":80"); !strings.Contains(fmt.Sprint(err), podsim.ErrTimeout.Error()) {
			t.Errorf("request %d from %s, outside the source ranges: %+v, %v, want dropped (timeout)", i, other, a, err)
		}
		if a, err := send(client.Netns, netip.Addr{}, lbRanges+":80"); err == nil {
			t.Errorf("request %d from a pod (%s), outside the source ranges: answered %+v", i, client.IP(), a)
		}
	}
	s.eventually(t, "a SourceRangeInvalid Event on lb-ranges naming 010.9.0.0/16", func() bool {
		evs, err := s.kubelet.Kube.CoreV1().Events("default").List(s.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=lb-ranges,reason=SourceRangeInvalid"})
		return err == nil && len(evs.Items) > 0 && evs.Items[0].Type == corev1.EventTypeWarning && strings.Contains(evs.Items[0].Message, `"010.9.0.0/16"`)
	})
	if a, err := send(s.site, allowed, lbRanges+":80"); a.Server != "web-1" {
		t.Errorf("the allowed client after the Event: %+v, %v", a, err)
	}
}
