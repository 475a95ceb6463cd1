// Package speakerproto is what edgeovn's node role and its BGP speaker process
// (agent/bgp/cmd/edgeovn-bgp) say to each other: JSON values, one a line, over the child's
// stdin (Desired, from the node role) and stdout (Report, from the speaker).
//
// Invariants:
//   - Every Desired is the full state (the speaker's options and every prefix to announce):
//     the speaker makes its announcement equal to the last one it read, so sending the same
//     value again changes nothing and a restarted speaker needs only the latest.
//   - The end of the speaker's stdin is the order to stop (as edgeovn stops): with graceful
//     restart it sends nothing, so the peers keep the routes; without it, a Cease.
//   - This package imports neither GoBGP nor client-go: both sides link it.
package speakerproto
