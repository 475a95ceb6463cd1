package podnet

import "strings"

// hostIfSuffix marks the host ends of pod veths; GC relies on it to recognise them.
const hostIfSuffix = "_h"

// hostIfIDLen keeps HostIfName within IFNAMSIZ (15 characters) while matching Kube-OVN's
// naming, so operators who know Kube-OVN recognise the interfaces.
const hostIfIDLen = 12

// HostIfName names the host end of a container's veth: the first 12 characters of the
// container ID followed by "_h".
func HostIfName(containerID string) string {
	id := containerID
	if len(id) > hostIfIDLen {
		id = id[:hostIfIDLen]
	}
	return id + hostIfSuffix
}

// IsHostIfName reports whether name has the shape HostIfName produces for a full-length
// container ID.
func IsHostIfName(name string) bool {
	return len(name) == hostIfIDLen+len(hostIfSuffix) && strings.HasSuffix(name, hostIfSuffix)
}
