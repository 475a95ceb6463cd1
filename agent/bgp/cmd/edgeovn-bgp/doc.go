// Command edgeovn-bgp is edgeovn's BGP speaker process, installed next to edgeovn. The node
// role starts it only when a BGP neighbour is configured, as its child (it dies with it:
// Pdeathsig), writes it the full desired state on stdin and reads its status from stdout
// (package speakerproto); see package speaker. It is not meant to be run by hand.
package main
