package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// inventory is what the node's containerd held when teardown began: what the sweep removes
// by path when the sandboxes could not be shut down cleanly.
type inventory struct {
	containers []string // container IDs (a sandbox's is its ID, and CNI's container ID)
	netns      []string // the sandboxes' network namespaces, /var/run/netns/cni-...
}

// containerInfo is the part of `ctr containers info` the inventory reads.
type containerInfo struct {
	Spec struct {
		Linux struct {
			Namespaces []struct {
				Type string `json:"type"`
				Path string `json:"path"`
			} `json:"namespaces"`
		} `json:"linux"`
	} `json:"Spec"`
}

// takeInventory lists containerd's containers and the network namespaces of the sandboxes.
func (n *RealNode) takeInventory(ctx context.Context) (inventory, error) {
	var inv inventory
	out, err := n.Ctr(ctx, "containers", "ls", "-q")
	if err != nil {
		return inv, err
	}
	inv.containers = strings.Fields(string(out))
	for _, id := range inv.containers {
		raw, err := n.Ctr(ctx, "containers", "info", id)
		if err != nil {
			continue // deleted meanwhile
		}
		var info containerInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return inv, fmt.Errorf("container %s: %w", id, err)
		}
		for _, ns := range info.Spec.Linux.Namespaces {
			if ns.Type == "network" && strings.HasPrefix(filepath.Base(ns.Path), sandboxNetnsPrefix) {
				inv.netns = append(inv.netns, ns.Path)
			}
		}
	}
	return inv, nil
}

// removeContainers deletes what containerd still holds after the kubelet stopped the pods:
// tasks, then sandboxes through the sandbox API (its controller deletes the pause task and
// container; the shim then exits and removes its socket), then the containers. Stopped pods'
// sandboxes linger until the kubelet's garbage collection, which never comes here.
func (n *RealNode) removeContainers(ctx context.Context, inv inventory) error {
	if len(inv.containers) == 0 {
		return nil
	}
	var errs []error
	for _, id := range inv.containers {
		_, _ = n.Ctr(ctx, "tasks", "rm", "--force", id) // most are gone already
	}
	out, err := n.Ctr(ctx, "sandboxes", "ls")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(out), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			if _, err := n.Ctr(ctx, "sandboxes", "rm", "--force", f[0]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, id := range inv.containers {
		_, _ = n.Ctr(ctx, "containers", "rm", id) // a sandbox's went with it
	}
	return errors.Join(errs...)
}

// removeByPath removes what sandboxes without a CNI DEL and shims that were killed leave
// outside the node's dir: the network namespace mounts, and for every container ID (the
// inventory's, and those of the shims the sweep killed) libcni's cached results and the
// shim's socket.
func (n *RealNode) removeByPath(inv inventory, shimIDs []string) error {
	var errs []error
	for _, p := range inv.netns {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		n.rig.log.Warn("real node: removing a sandbox network namespace left mounted", "node", n.Name, "netns", p)
		errs = append(errs, removeNetnsMount(p))
	}
	for _, id := range append(slices.Clone(inv.containers), shimIDs...) {
		if !validID(id) {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(cniCacheDir, "results", "*-"+id+"-*"))
		for _, m := range append(matches, n.shimSocket(id)) {
			if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// cniCacheDir is libcni's default cache, which containerd uses.
const cniCacheDir = "/var/lib/cni"

// shimSocket is where the shim started for a container (a sandbox) listens: containerd names
// it by a hash of its own address, the namespace and the ID, under /run/containerd/s
// (containerd's pkg/shim SocketAddress), whatever its state dir.
func (n *RealNode) shimSocket(id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(n.ContainerdSocket, "k8s.io", id)))
	return "/run/containerd/s/" + hex.EncodeToString(sum[:])
}

// validID: containerd's IDs are 64 hex digits; anything else is never used in a path.
func validID(id string) bool {
	if len(id) != 64 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// shimID returns the -id of a containerd-shim command line of this node's containerd, or "".
func (n *RealNode) shimID(args []string) string {
	var id, address string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-id":
			id = args[i+1]
		case "-address":
			address = args[i+1]
		}
	}
	if address != n.ContainerdSocket {
		return ""
	}
	return id
}
