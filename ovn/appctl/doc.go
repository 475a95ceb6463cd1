// Package appctl talks to the running ovs-vswitchd over its control socket, with the
// JSON-RPC that ovs-appctl speaks: Call runs one command, ControlSocket finds the socket in
// Open vSwitch's run directory, PurgeFlows empties the datapath's flow cache
// (revalidator/purge), and TCPSeqCheck and DisableTCPSeqCheck read and turn off the userspace
// conntrack's TCP sequence check (dpctl/ct-get-tcp-seq-chk, dpctl/ct-disable-tcp-seq-chk).
//
// edgeovn needs the purge on the userspace datapath only: Open vSwitch 3.1 (Debian 12's) can
// keep a cached megaflow whose actions were translated from OpenFlow rules ovn-controller has
// since replaced, and its revalidator does not repair one that packets keep hitting (see
// agent/node's flow cache purge), and the sequence check off on the userspace datapath only
// (Open vSwitch 3.1's conntrack drops the RST by which Linux recovers a 5-tuple reused in
// TIME_WAIT: agent/node's tcpseq.go).
//
// Invariants: it only ever sends the commands its callers name and changes no configuration
// in the database (the sequence check lives in ovs-vswitchd's memory until it restarts);
// a command the daemon rejects is an error carrying the daemon's message.
//
// Concurrency: every call opens, uses and closes its own connection, so calls may run
// concurrently.
package appctl
