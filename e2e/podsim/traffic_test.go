package podsim

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/testutils"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// twoNamespaces links two fresh namespaces with a veth pair, 192.0.2.1/24 (a) and
// 192.0.2.2/24 (b), and returns their paths.
func twoNamespaces(t *testing.T) (a, b string) {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root for network namespaces")
	}
	var paths []string
	for range 2 {
		n, err := testutils.NewNS()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = RemoveNetns(n.Path()); n.Close() })
		paths = append(paths, n.Path())
	}
	na, nb := filepath.Base(paths[0]), filepath.Base(paths[1])
	for _, args := range [][]string{
		{"link", "add", "va", "netns", na, "type", "veth", "peer", "name", "vb", "netns", nb},
		{"-n", na, "addr", "add", "192.0.2.1/24", "dev", "va"},
		{"-n", nb, "addr", "add", "192.0.2.2/24", "dev", "vb"},
		{"-n", na, "link", "set", "va", "up"},
		{"-n", nb, "link", "set", "vb", "up"},
		{"-n", nb, "link", "set", "lo", "up"},
		// 192.0.2.9 is a black hole: its MAC is known, nobody has it.
		{"-n", na, "neigh", "add", "192.0.2.9", "lladdr", "02:00:00:00:00:09", "dev", "va", "nud", "permanent"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return paths[0], paths[1]
}

// TestServeSend: the server names itself and the client it saw, over TCP and UDP; a closed
// port is refused, a black hole times out.
func TestServeSend(t *testing.T) {
	a, b := twoNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := Serve(ctx, ServeRequest{Netns: b, Name: "pod-b"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP} {
		ans, err := Send(ctx, SendRequest{Netns: a, Protocol: proto, Addr: srv.Addr(netip.MustParseAddr("192.0.2.2"))})
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if ans.Server != "pod-b" || ans.Client.Addr() != netip.MustParseAddr("192.0.2.1") {
			t.Fatalf("%s: answer %+v, want pod-b seeing 192.0.2.1", proto, ans)
		}

		closed := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.2"), srv.Port+1)
		if _, err := Send(ctx, SendRequest{Netns: a, Protocol: proto, Addr: closed}); !errors.Is(err, ErrRefused) {
			t.Errorf("%s to closed port %s: err = %v, want ErrRefused", proto, closed, err)
		}
		hole := netip.MustParseAddrPort("192.0.2.9:80")
		_, err = Send(ctx, SendRequest{Netns: a, Protocol: proto, Addr: hole, Timeout: 700 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s to black hole %s: err = %v, want ErrTimeout", proto, hole, err)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Send(ctx, SendRequest{Netns: a, Protocol: corev1.ProtocolTCP, Addr: srv.Addr(netip.MustParseAddr("192.0.2.2"))}); !errors.Is(err, ErrRefused) {
		t.Errorf("after Close: err = %v, want ErrRefused", err)
	}
}
