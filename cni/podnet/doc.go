// Package podnet owns the pod side of a pod's network: the veth pair between the host and the
// pod's network namespace, the pod end's MAC, MTU, addresses and default routes, and its TX
// checksum offload setting.
//
// Invariants:
//   - The host end is named HostIfName(containerID) (an attachment network's
//     AttachmentHostIfName(containerID, ifname), Kube-OVN's "<id>_<ifname>_h") and lives in
//     the caller's network namespace; the pod end lives in the pod's namespace under the
//     runtime's ifname. An attachment's interface gets no default route unless asked
//     (SetupRequest.NoDefaultRoute) and its own Routes.
//   - Setup replaces whatever a crashed earlier attempt left under the same names, so ADD can
//     be repeated. Teardown succeeds when the pair or the namespace is already gone, so DEL
//     can be repeated.
//   - All work inside the pod's namespace runs through ns.Do from
//     github.com/containernetworking/plugins/pkg/ns, which pins an OS thread for the switch
//     and restores it afterwards.
//
// Concurrency: functions are safe to call concurrently for different pods. Calls for the same
// host interface must be serialized by the caller (the CNI runtime never overlaps them). The
// "host" namespace is the one of the calling goroutine's thread: callers that run inside
// another namespace (tests) must call from a goroutine locked to that namespace, and podnet
// starts no goroutines of its own outside ns.Do.
package podnet
