package node

import (
	"context"
	"time"
)

// APIStartGrace bounds how long what needs the API server (the pod and node watches here,
// the controller role's campaign in package agent) waits for the node role's start to reach
// its first verdict. Their start (a kubeconfig, a clientset, TLS to the API server, informer
// lists, and for the controller an NB connection and its whole cache) costs more CPU than
// the node role's own, and on a small busy host the two fight for it: READY=1 came 100-200
// ms later with them running alongside. Nothing on READY's path needs them, and no CNI
// request can use them before the node role serves anyway. The bound keeps a node role that
// cannot start (its database down) from holding the controller back.
var APIStartGrace = time.Second

// AfterStart waits until started is closed or APIStartGrace has passed, and reports false
// when ctx ended first.
func AfterStart(ctx context.Context, started <-chan struct{}) bool {
	t := time.NewTimer(APIStartGrace)
	defer t.Stop()
	select {
	case <-started:
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}
