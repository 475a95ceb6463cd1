package iperf

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Request is one iperf3 run.
type Request struct {
	// ClientNetns and ServerNetns are names under /run/netns, or paths (podsim's
	// Sandbox.Netns).
	ClientNetns, ServerNetns string
	Server                   netip.Addr
	Port                     int // 0: iperf3's default 5201
	Seconds                  float64
	// UDPMbit > 0 sends UDP at that offered rate instead of TCP.
	UDPMbit float64
	// Reverse makes the server send and the client receive (iperf3 -R).
	Reverse bool
	// Interval is the reporting interval, 0: one second.
	Interval time.Duration
}

// Result is what the receiver measured.
type Result struct {
	Mbit float64 // over the whole run
	// Intervals are the receiver's rates in Mbit/s, Interval apart from the start.
	Intervals []float64
}

// Run runs iperf3 once. The server binds in its own time: the client is retried while the
// connection is refused.
func Run(ctx context.Context, r Request) (Result, error) {
	port := strconv.Itoa(max(r.Port, 5201))
	srv := inNetns(ctx, r.ServerNetns, "iperf3", "-s", "-1", "-B", r.Server.String(), "-p", port)
	if err := srv.Start(); err != nil {
		return Result{}, fmt.Errorf("start iperf3 server in %s: %w", r.ServerNetns, err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	args := []string{"iperf3", "-J", "--get-server-output", "-c", r.Server.String(), "-p", port,
		"-t", strconv.FormatFloat(r.Seconds, 'f', -1, 64)}
	if r.Interval > 0 {
		args = append(args, "-i", strconv.FormatFloat(r.Interval.Seconds(), 'f', -1, 64))
	}
	if r.UDPMbit > 0 {
		args = append(args, "-u", "-b", strconv.FormatFloat(r.UDPMbit, 'f', -1, 64)+"M")
	}
	if r.Reverse {
		args = append(args, "-R")
	}
	var out []byte
	var err error
	for range 30 {
		out, err = inNetns(ctx, r.ClientNetns, args...).Output()
		if res, ok := parse(out, r.Reverse); ok {
			return res, nil
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return Result{}, fmt.Errorf("iperf3 %s -> %s measured nothing (%v):\n%.2000s", r.ClientNetns, r.Server, err, out)
}

// inNetns is the command run in the network namespace netns: a path is entered with
// nsenter, a name with ip netns exec.
func inNetns(ctx context.Context, netns string, args ...string) *exec.Cmd {
	if strings.Contains(netns, "/") {
		return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + netns}, args...)...)
	}
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", netns}, args...)...)
}

type report struct {
	Intervals []struct {
		Sum struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
		Sum struct { // UDP
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum"`
	} `json:"end"`
}

// parse reads the receiver's view: the server's report, or with Reverse the client's own.
func parse(out []byte, reverse bool) (Result, bool) {
	var client struct {
		report
		Server *report `json:"server_output_json"`
	}
	if json.Unmarshal(out, &client) != nil {
		return Result{}, false
	}
	recv := client.Server
	if reverse || recv == nil {
		recv = &client.report
	}
	var res Result
	for _, i := range recv.Intervals {
		res.Intervals = append(res.Intervals, i.Sum.BitsPerSecond/1e6)
	}
	res.Mbit = recv.End.SumReceived.BitsPerSecond / 1e6
	if res.Mbit == 0 {
		res.Mbit = recv.End.Sum.BitsPerSecond / 1e6 // UDP's receiver reports a sum
	}
	return res, res.Mbit > 0 && len(res.Intervals) > 0
}
