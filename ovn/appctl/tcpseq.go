package appctl

import (
	"context"
	"fmt"
	"strings"
)

// TCPSeqCheck reports whether the userspace datapath's conntrack checks TCP sequence numbers
// (`ovs-appctl dpctl/ct-get-tcp-seq-chk`; on by default, and again after every restart of
// ovs-vswitchd: the setting lives in its memory only). It fails until a userspace datapath
// exists (a netdev bridge).
func TCPSeqCheck(ctx context.Context, socket string) (bool, error) {
	out, err := Call(ctx, socket, "dpctl/ct-get-tcp-seq-chk")
	if err != nil {
		return false, fmt.Errorf("read the conntrack tcp sequence check: %w", err)
	}
	switch {
	case strings.Contains(out, "disabled"):
		return false, nil
	case strings.Contains(out, "enabled"):
		return true, nil
	}
	return false, fmt.Errorf("read the conntrack tcp sequence check: unexpected answer %q", strings.TrimSpace(out))
}

// DisableTCPSeqCheck turns the userspace conntrack's TCP sequence check off
// (`ovs-appctl dpctl/ct-disable-tcp-seq-chk`), as the kernel's nf_conntrack_tcp_be_liberal
// does for the kernel's: see agent/node's tcpseq.go for why edgeovn needs it.
func DisableTCPSeqCheck(ctx context.Context, socket string) error {
	if _, err := Call(ctx, socket, "dpctl/ct-disable-tcp-seq-chk"); err != nil {
		return fmt.Errorf("disable the conntrack tcp sequence check: %w", err)
	}
	return nil
}
