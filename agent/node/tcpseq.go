package node

import (
	"context"
	"time"

	"github.com/edgeovn/edgeovn/ovn/appctl"
)

// tcpSeqCheckEvery is how often the node makes sure the userspace conntrack's TCP sequence
// check is still off: the setting lives in ovs-vswitchd's memory, and a restarted
// ovs-vswitchd checks again. One control-socket call when nothing changed.
const tcpSeqCheckEvery = 5 * time.Second

// keepTCPSeqCheckOff runs on the userspace datapath only. It turns off the TCP sequence check
// of ovs-vswitchd's conntrack (`ovs-appctl dpctl/ct-disable-tcp-seq-chk`) and turns it off
// again after ovs-vswitchd restarts, until ctx ends.
//
// Why: Open vSwitch 3.1's userspace conntrack drops the packets by which Linux recovers a TCP
// 5-tuple that is reused while one side still holds it in TIME_WAIT (the kernel's conntrack
// accepts them). A server that closes first (most do) keeps each connection in TIME_WAIT for
// 60 s; when a new client connection arrives on the same tuple, the server's kernel answers
// the SYN with the old connection's ACK, the client answers that with a RST (which ends the
// TIME_WAIT) and sends its SYN again 10 ms later. The userspace conntrack, which has already
// taken the SYN as a new connection, finds that ACK out of its window
// (conntrack_tcp_seq_chk_failed), OVN drops it as invalid, and the client waits out its SYN
// retransmissions: a connection lost. Tuples recur that fast wherever many connections share
// one source address: the host's masquerade of externalTrafficPolicy: Cluster Services (every
// connection from outside leaves with the host's one join address) and kube-proxy's alike.
// Measured in docs/benchmarks.md (LoadBalancer IPs); the kernel datapath needs none of this.
func (r *Role) keepTCPSeqCheckOff(ctx context.Context) {
	rundir := appctl.RunDir(r.req.OVSEndpoint)
	tick := time.NewTicker(tcpSeqCheckEvery)
	defer tick.Stop()
	failing := false
	for {
		turnedOff, err := disableTCPSeqCheck(ctx, rundir)
		switch {
		case err != nil && !failing:
			// Expected until ovs-vswitchd has made br-int's datapath; logged once per spell.
			r.log.Debug("cannot turn off the userspace conntrack's tcp sequence check yet, will retry", "rundir", rundir, "err", err)
		case turnedOff:
			r.log.Info("userspace conntrack: tcp sequence check turned off (Open vSwitch 3.1 drops the packets that recover a reused TIME_WAIT tuple)",
				"rundir", rundir)
		}
		failing = err != nil
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// disableTCPSeqCheck turns the check off when it is on, and says whether it did.
func disableTCPSeqCheck(ctx context.Context, rundir string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, purgeTimeout)
	defer cancel()
	sock, err := appctl.ControlSocket(rundir)
	if err != nil {
		return false, err
	}
	on, err := appctl.TCPSeqCheck(ctx, sock)
	if err != nil || !on {
		return false, err
	}
	return true, appctl.DisableTCPSeqCheck(ctx, sock)
}
