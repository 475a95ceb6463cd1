package podnet

import (
	"fmt"
	"hash/fnv"
	"strings"
)

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

// AttachmentHostIfName names the host end of a container's attachment veth (a Multus
// attachment on pod interface ifName), as Kube-OVN does: the container ID cut so that
// "<id>_<ifName>_h" fits in 15 characters ("3f2a9c01_net1_h"). An ifName of 12 characters
// or more is replaced by its hash.
func AttachmentHostIfName(containerID, ifName string) string {
	if len(ifName) >= hostIfIDLen-2 {
		h := fnv.New32a()
		h.Write([]byte(ifName))
		ifName = fmt.Sprintf("%08x", h.Sum32())[:hostIfIDLen-4]
	}
	id := containerID
	if n := hostIfIDLen - len(ifName); len(id) > n {
		id = id[:n]
	}
	return id + "_" + ifName + hostIfSuffix
}

// IsHostIfName reports whether name has the shape HostIfName produces for a full-length
// container ID, or AttachmentHostIfName.
func IsHostIfName(name string) bool {
	if !strings.HasSuffix(name, hostIfSuffix) {
		return false
	}
	if len(name) == hostIfIDLen+len(hostIfSuffix) {
		return true
	}
	id, ifName, ok := strings.Cut(strings.TrimSuffix(name, hostIfSuffix), "_")
	return ok && len(name) == hostIfIDLen+len(hostIfSuffix)+1 && id != "" && ifName != ""
}
