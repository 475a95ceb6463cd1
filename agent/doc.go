// Package agent runs edgeovn's two roles in one process: the node role always (package
// node), the controller role only while this host holds the controller Lease (package
// controller). Losing the Lease stops the controller role and nothing else; the node role, and
// with it every pod's network, never waits on the API server or on leadership. At start it is
// the other way round: the controller role's campaign waits for the node role's first verdict
// (at most node.APIStartGrace), so the two do not fight over the CPU on the way to READY=1.
//
// Config is the daemon's single configuration struct: defaults, flags and validation.
package agent
