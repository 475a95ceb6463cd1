package benchkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"time"
)

// IPerf runs an iperf3 server (one test, bound to server) in the network namespace at
// serverNetns and its client in clientNetns (paths, as podsim's sandboxes have them) for the
// given seconds, and returns the receiver's rate in Mbit/s.
func IPerf(ctx context.Context, clientNetns, serverNetns string, server netip.Addr, seconds int) (float64, error) {
	srv := exec.CommandContext(ctx, "nsenter", "--net="+serverNetns, "iperf3", "-s", "-1", "-B", server.String())
	if err := srv.Start(); err != nil {
		return 0, fmt.Errorf("start iperf3 server in %s: %w", serverNetns, err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var out []byte
	var err error
	for range 30 { // the server binds in its own time: "connection refused" until it does
		out, err = exec.CommandContext(ctx, "nsenter", "--net="+clientNetns, "iperf3", "-J", "-c", server.String(),
			"-t", strconv.Itoa(seconds)).Output()
		if mbit, ok := iperfRate(out); ok {
			return mbit, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("iperf3 %s -> %s measured nothing (%v):\n%.2000s", clientNetns, server, err, out)
}

// iperfRate reads the receiver's rate in Mbit/s from iperf3's JSON; false when it has none.
func iperfRate(out []byte) (float64, bool) {
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if json.Unmarshal(out, &res) != nil || res.End.SumReceived.BitsPerSecond == 0 {
		return 0, false
	}
	return res.End.SumReceived.BitsPerSecond / 1e6, true
}
