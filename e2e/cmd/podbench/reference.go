package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// peerVersion is the plugins release edgeovn builds against.
const peerVersion = "v1.9.1"

// switchToReference stops edgeovn and puts the reference bridge + host-local network (with
// portmap chained, as in edgeovn's config) in front of containerd: the plugins built from the
// module cache into the node's CNI bin dir, the config written as 00-bridge.conflist, which
// sorts before edgeovn's, by a rename within the conf dir (what containerd reloads on). It
// waits until the node is Ready on it.
func (b *bench) switchToReference(ctx context.Context) error {
	k := daemon.Kubelet(b.rig, nodeName)
	for _, p := range []string{"plugins/main/bridge", "plugins/ipam/host-local"} {
		// go install pkg@version builds outside this module: the peers' dependencies never
		// enter edgeovn's go.mod.
		cmd := exec.CommandContext(ctx, "go", "install", "github.com/containernetworking/plugins/"+p+"@"+peerVersion)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOBIN="+k.BinDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", p, err, out)
		}
	}
	old, err := b.rig.Daemon("edgeovn")
	if err != nil {
		return err
	}
	if err := old.Stop(); err != nil {
		return err
	}
	list := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"bridge-ref","plugins":[
{"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":false,"ipam":{"type":"host-local","dataDir":%q,"ranges":[[{"subnet":"10.88.0.0/16"}]]}},
{"type":"portmap","capabilities":{"portMappings":true}}]}
`, filepath.Join(b.work, "host-local"))
	tmp := filepath.Join(k.ConfDir, ".00-bridge.conflist.tmp")
	if err := os.WriteFile(tmp, []byte(list), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(k.ConfDir, "00-bridge.conflist")); err != nil {
		return err
	}
	_, err = b.node.WaitReady(ctx, "True")
	return err
}
