package main

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// benchRestarts: two pods ping each other every 10 ms and pods are created and deleted in a
// loop while edgeovn restarts n times; then one quiet restart of each kind, counting the
// databases' write transactions.
func benchRestarts(ctx context.Context, n *node, restarts int) error {
	var pods []*podsim.Sandbox
	for _, name := range []string{"ping-a", "ping-b"} {
		pod, err := n.k.CreatePod(ctx, "default", name, nil)
		if err != nil {
			return err
		}
		sb, err := n.k.RunSandbox(ctx, pod)
		if sb != nil {
			defer podsim.RemoveNetns(sb.Netns)
		}
		if err != nil {
			return err
		}
		pods = append(pods, sb)
	}
	var pingers []*podsim.Pinger
	for _, c := range [][2]*podsim.Sandbox{{pods[0], pods[1]}, {pods[1], pods[0]}} {
		p, err := podsim.StartPinger(c[0], c[1].IP(), 10*time.Millisecond)
		if err != nil {
			return err
		}
		pingers = append(pingers, p)
	}
	churn := podsim.StartChurn(ctx, n.k, "default", "churn")
	if err := churn.WaitAdds(ctx, 1); err != nil {
		return err
	}
	stops, ready := map[syscall.Signal][]time.Duration{}, map[syscall.Signal][]time.Duration{}
	var all []daemon.Restart
	for i := range restarts {
		sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}[i%2]
		r, err := n.sd.Restart(ctx, sig, fmt.Sprintf("edgeovn-%d", i+1))
		if err != nil {
			return err
		}
		stops[sig], ready[sig] = append(stops[sig], r.Stop), append(ready[sig], r.ToReady)
		all = append(all, r)
		if err := churn.WaitAdds(ctx, 2); err != nil {
			return err
		}
	}
	st := churn.Stop()
	shell, binary, err := spawnCosts(ctx, n.rig, n.bin, restarts)
	if err != nil {
		return err
	}
	var sent, lost int
	for _, p := range pingers {
		ps := p.Stop()
		sent, lost = sent+ps.Sent, lost+len(ps.Lost)
	}
	writes := map[syscall.Signal][2]int{}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		w, err := n.sd.RestartWrites(ctx, sig, "edgeovn-quiet-"+sig.String()[:4])
		if err != nil {
			return err
		}
		writes[sig] = [2]int{len(w.NB), len(w.OVS)}
	}
	fmt.Printf("\n%d restarts of edgeovn under a systemd stand-in (edgeovn.socket, Type=notify), one host, userspace datapath\n\n", restarts)
	fmt.Println("| restart | signal to exit, p50 / max | start to READY=1, p50 / max | NB / OVS write transactions (quiet restart) |")
	fmt.Println("|---|---|---|---|")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		fmt.Printf("| %v | %s / %s | %s / %s | %d / %d |\n", sig, ms(pct(stops[sig], 50)), ms(pct(stops[sig], 100)),
			ms(pct(ready[sig], 50)), ms(pct(ready[sig], 100)), writes[sig][0], writes[sig][1])
	}
	printPhases(all)
	printSpawnCosts(shell, binary)
	fmt.Printf("\npings every 10 ms both ways: %d sent, %d lost\n", sent, lost)
	fmt.Printf("pod loop: %d ADDs and %d DELs, %d failed; slowest ADD %s\n", st.Adds, st.Dels, len(st.Failures), ms(st.MaxAdd))
	for _, f := range st.Failures {
		fmt.Println("  failed:", f)
	}
	return nil
}
