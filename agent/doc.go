// Package agent runs edgeovn's two roles in one process: the node role always (package
// node), the controller role only while this host holds the controller Lease (package
// controller). Losing the Lease stops the controller role and nothing else; the node role, and
// with it every pod's network, never waits on the API server or on leadership. At start it is
// the other way round: the controller role's campaign waits for the node role's first verdict
// (at most node.APIStartGrace), so the two do not fight over the CPU on the way to READY=1.
//
// The configuration is package config's (config.Config, validated before Run; Run reads this
// host's networks and refuses a pod or join network on one of them before anything starts).
// The roles' requests are filled in one place each: rolerequests.go hands config.Cluster with
// config.Node to node.Request and with config.Controller to controller.Request, whole;
// leaderconfig.go fills leader.Config. A test fails when a field of one of them is left unset
// or differs from the configuration. Election is package leader's: a host campaigns for the
// controller Lease only while it is eligible and runs the controller role while it holds it.
// The API clients come from package kubeapi (kubeapi.Source waits for the kubeconfig).
// memlimit.go keeps Go's soft memory limit, which steps aside while CNI ADDs arrive.
package agent
