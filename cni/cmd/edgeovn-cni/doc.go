// Command edgeovn-cni is the thin CNI binary installed as /opt/cni/bin/edgeovn. It forwards
// each CNI command to the edgeovn daemon over its unix socket; see package plugin.
package main
