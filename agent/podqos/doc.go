// Package podqos applies Kube-OVN's pod QoS annotations (ovn.kubernetes.io/ingress_rate,
// egress_rate in Mbit/s, ingress_burst, egress_burst in Mbit, and netem's latency, jitter,
// limit, loss) to a pod's primary interface, at CNI ADD and again whenever they change.
//
// Directions are the pod's: ingress is what the pod receives, shaped by a tbf on the egress
// of the host end of its veth (the device OVS sends the pod's traffic to), whose OVS port
// carries a linux-noop QoS row so that ovs-vswitchd leaves that qdisc alone (without one it
// resets a port's root qdisc when it reconfigures the port or restarts). The row is created
// with the port when the pod has QoS annotations at ADD (Wanted), else before its first
// limit, which is then applied again a little later (Apply's recheck), and stays with the
// port until it is deleted;
// egress is what the pod sends, shaped by a tbf on the egress of the pod's own interface, in
// its namespace, with a netem above it where the kernel has netem. Both are kernel qdiscs
// that shape whatever the datapath (userspace or kernel) is, TCP and UDP alike; OVS's
// Interface policing is not used: it needs act_police, which this machine kind lacks
// (docs/qos.md has the measurements).
//
// Invariants: a pod's annotations are applied all or nothing: with any bad one (Parse) nothing
// changes and a Warning Event (QoSInvalid) names each bad annotation and its value; netem on a
// kernel without it is found by asking the kernel, reported (NetemUnsupported) and the rates
// applied regardless. A root qdisc edgeovn did not make (its handle is not e0e0:) is replaced
// only when a limit is asked for, never removed. Applying what is in force writes nothing.
// A Shaper is safe for concurrent use and applies one pod at a time.
package podqos
