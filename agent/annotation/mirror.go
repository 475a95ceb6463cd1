package annotation

// Mirror is Kube-OVN's per-pod mirroring switch: "true" mirrors the pod's port to the host's
// mirror interface; any other value, or none, does not.
const Mirror = "ovn.kubernetes.io/mirror"
