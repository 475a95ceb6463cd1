// Package multus reads what Multus users write: a pod's network selection
// (k8s.v1.cni.cncf.io/networks, v1.multus-cni.io/default-network) in its short form
// ("name", "ns/name", "name@iface", comma-separated) and its JSON form (a list of
// {name, namespace, interface, ips, mac}), and a NetworkAttachmentDefinition's CNI
// configuration (a single plugin or a conflist), enough to tell a kube-ovn attachment (type
// "kube-ovn") from the rest. Interfaces not named get Multus's names: net1, net2, ... by
// position in the selection. Attachments turns a selection and the NADs it names into the
// kube-ovn attachments of a pod, with Kube-OVN's providers ("<nad>.<namespace>.ovn", and
// ".<iface>" appended when one NAD is selected twice), refusing two attachments on one
// interface name. A NAD of another plugin whose "ipam" has type "kube-ovn" (macvlan with
// Kube-OVN as its IPAM) is an IPAMOnly attachment of provider "<nad>.<namespace>", as Kube-OVN
// names it; selected twice by one pod it is refused (the provider has no interface in it).
//
// The package is pure: no client-go, no I/O; bad input is an error naming the attachment.
package multus
