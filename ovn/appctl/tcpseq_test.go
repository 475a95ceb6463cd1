package appctl

import (
	"context"
	"errors"
	"testing"
	"time"
)

// ovs-vswitchd checks TCP sequence numbers until told otherwise; before a userspace datapath
// exists both calls fail with the daemon's message; DisableTCPSeqCheck turns it off and
// calling it again changes nothing.
func TestTCPSeqCheckRealVSwitchd(t *testing.T) {
	srv := startVSwitchd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sock, err := ControlSocket(RunDir(srv.Endpoint))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TCPSeqCheck(ctx, sock); !errors.Is(err, ErrCommand) {
		t.Fatalf("TCPSeqCheck without a datapath = %v, want ErrCommand", err)
	}
	srv.Run(t, "ovs-vsctl", "add-br", "br-seq", "--", "set", "bridge", "br-seq", "datapath_type=netdev")
	for {
		on, err := TCPSeqCheck(ctx, sock)
		if err == nil {
			if !on {
				t.Fatal("TCPSeqCheck = off on a fresh ovs-vswitchd, want on (its default)")
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("TCPSeqCheck never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 2 {
		if err := DisableTCPSeqCheck(ctx, sock); err != nil {
			t.Fatal(err)
		}
		if on, err := TCPSeqCheck(ctx, sock); err != nil || on {
			t.Fatalf("TCPSeqCheck after DisableTCPSeqCheck = %v, %v; want off", on, err)
		}
	}
}
