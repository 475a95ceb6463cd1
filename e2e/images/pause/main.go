// Command pause is the sandbox process of the e2e suite's real node, built into the image
// containerd pins as its sandbox image: it holds the pod's namespaces, reaps any child it
// inherits (as PID 1 of the pod) and exits on SIGTERM or SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
