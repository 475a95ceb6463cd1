package ovn

import (
	"context"
	"time"
)

// answerGrace is how long orderByAnswer waits for the other members once one has answered:
// the live members of a raft cluster on one network answer within milliseconds of each other,
// a dead one not at all.
const answerGrace = 250 * time.Millisecond

// orderByAnswer asks every endpoint at once (as Probe does) and returns them with the ones
// that answered first, in the order they answered, then the others in their given order.
// libovsdb tries a client's endpoints in order, each dial bounded only by the connect's
// context: a member whose host died (its address black-holed) held the first connect of a new
// controller term for over a minute (a TCP connect's SYN retries) when it came first in the
// list. A single endpoint is returned as it is.
func orderByAnswer(ctx context.Context, req ProbeRequest) []string {
	if len(req.Endpoints) < 2 {
		return req.Endpoints
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	answered := make(chan string, len(req.Endpoints))
	failed := make(chan struct{}, len(req.Endpoints))
	for _, ep := range req.Endpoints {
		go func() {
			if probeOne(ctx, ep, req) == nil {
				answered <- ep
				return
			}
			failed <- struct{}{}
		}()
	}
	var first []string
	var grace <-chan time.Time
	for range req.Endpoints {
		select {
		case ep := <-answered:
			first = append(first, ep)
			if grace == nil {
				grace = time.After(answerGrace)
			}
		case <-failed:
		case <-grace:
			return appendRest(first, req.Endpoints)
		case <-ctx.Done():
			return appendRest(first, req.Endpoints)
		}
	}
	return appendRest(first, req.Endpoints)
}

// appendRest appends to first the endpoints of all it lacks, in their order.
func appendRest(first, all []string) []string {
	out := append([]string(nil), first...)
	for _, ep := range all {
		seen := false
		for _, f := range first {
			seen = seen || f == ep
		}
		if !seen {
			out = append(out, ep)
		}
	}
	return out
}
