// Package agent runs edgeovn's two roles in one process: the node role always (package
// node), the controller role only while this host holds the controller Lease (package
// controller). Losing the Lease stops the controller role and nothing else; the node role, and
// with it every pod's network, never waits on the API server or on leadership. At start it is
// the other way round: the controller role's campaign waits for the node role's first verdict
// (at most node.APIStartGrace), so the two do not fight over the CPU on the way to READY=1.
//
// Election (elect.go, lease.go, eligible.go, eligibility.go, term.go): a host campaigns for the
// coordination.k8s.io Lease with edgeovn's own elector (client-go's rules: expiry judged by
// when this host saw the record change, renewal within the renew deadline; client-go's own
// package links every API group) only while it is eligible (OVN northbound answers, the API
// grants every verb the controller role uses) and gives it up when two rechecks in a row fail
// or its controller role fails.
// A grant of the rights is trusted for a minute, also by the next process on the host
// (rightsrecord.go: recorded in the runtime directory, bound to the kubeconfig and the rights).
// Invariants: terms never overlap in one process (the next campaign starts only once the
// previous term's lead has returned), and the Lease is released only after the term stopped.
//
// Config is the daemon's single configuration struct: defaults, flags and validation.
package agent
