// Package appctl talks to the running ovs-vswitchd over its control socket, with the
// JSON-RPC that ovs-appctl speaks: Call runs one command, ControlSocket finds the socket in
// Open vSwitch's run directory, and PurgeFlows empties the datapath's flow cache
// (revalidator/purge).
//
// edgeovn needs the purge on the userspace datapath only: Open vSwitch 3.1 (Debian 12's) can
// keep a cached megaflow whose actions were translated from OpenFlow rules ovn-controller has
// since replaced, and its revalidator does not repair one that packets keep hitting (see
// agent/node's flow cache purge).
//
// Invariants: it only ever sends the commands its callers name and changes no configuration;
// a command the daemon rejects is an error carrying the daemon's message.
//
// Concurrency: every call opens, uses and closes its own connection, so calls may run
// concurrently.
package appctl
