package node

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestServiceIPGuardReadsListenersOnlyForHostAddresses: the host's socket tables are read once,
// and only when a Service IP is one of the host's own addresses; a host listener on the port
// then refuses it.
func TestServiceIPGuardReadsListenersOnlyForHostAddresses(t *testing.T) {
	reads := 0
	g := ipGuard{hostAddrs: map[netip.Addr]bool{netip.MustParseAddr("192.0.2.10"): true},
		readListening: func() (map[string]map[netip.AddrPort]bool, error) {
			reads++
			return map[string]map[netip.AddrPort]bool{"tcp": {netip.MustParseAddrPort("0.0.0.0:22"): true}, "udp": {}}, nil
		}}
	ssh := []corev1.ServicePort{{Port: 22, Protocol: corev1.ProtocolTCP}}
	if err := g.refuse(netip.MustParseAddr("198.51.100.7"), ssh); err != nil || reads != 0 {
		t.Fatalf("an address not the host's: err %v, %d reads, want nil and 0", err, reads)
	}
	for range 2 {
		if err := g.refuse(netip.MustParseAddr("192.0.2.10"), ssh); err == nil {
			t.Fatal("the host's own address on sshd's port was not refused")
		}
	}
	if reads != 1 {
		t.Fatalf("%d reads of the socket tables, want 1", reads)
	}
}
