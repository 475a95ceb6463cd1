// Package failover runs the controller failover scenario on a rig: two edgeovn processes
// against one API server and one northbound (the rig's host, which leads, and a standby
// host, daemon.Standby), pods created as API objects on the rig's node while the leader is
// SIGKILLed, and the standby taking over. The e2e suite checks its outcome (every pod
// allocated once, no address twice); bench/failoverbench prints its timing. It asserts
// nothing itself.
package failover
