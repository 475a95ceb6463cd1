package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// network is one pod network the node can run on.
type network struct {
	name   string
	short  string       // namespace prefix
	prefix netip.Prefix // every pod's address comes from it
	use    func(context.Context) error
}

func (b *bench) networks() []network {
	return []network{
		{"edgeovn", "eovn", netip.MustParsePrefix("10.42.0.0/16"), b.useEdgeovn},
		{"bridge + host-local (reference plugins)", "ref", netip.MustParsePrefix("10.88.0.0/16"), b.useReference},
	}
}

// peerVersion is the plugins release edgeovn builds against.
const peerVersion = "v1.9.1"

// refConf sorts before edgeovn's 01-edgeovn.conflist, so containerd loads it while it exists.
const refConf = "00-bridge.conflist"

// useEdgeovn makes edgeovn the node's network: the reference config removed, edgeovn running
// (started again if the reference round stopped it), and a canary pod Running on it.
func (b *bench) useEdgeovn(ctx context.Context) error {
	k := daemon.Kubelet(b.rig, nodeName)
	if err := os.Remove(filepath.Join(k.ConfDir, refConf)); err != nil && !os.IsNotExist(err) {
		return err
	}
	if !b.daemonRunning() {
		if _, err := daemon.Start(ctx, b.rig, b.daemon); err != nil {
			return err
		}
	}
	if err := k.WaitReady(ctx); err != nil {
		return err
	}
	return b.canary(ctx, "edgeovn", netip.MustParsePrefix("10.42.0.0/16"))
}

// useReference makes the reference bridge + host-local network (with portmap chained for
// hostPort, as such a network needs it; edgeovn serves hostPort itself) the node's: the
// plugins built from the module cache into the node's CNI bin dir, edgeovn stopped (its controller would otherwise annotate every pod), and the config
// written as 00-bridge.conflist by a rename within the conf dir, which containerd reloads on.
func (b *bench) useReference(ctx context.Context) error {
	k := daemon.Kubelet(b.rig, nodeName)
	for _, p := range []string{"plugins/main/bridge", "plugins/ipam/host-local", "plugins/meta/portmap"} {
		if _, err := os.Stat(filepath.Join(k.BinDir, filepath.Base(p))); err == nil {
			continue
		}
		// go install pkg@version builds outside this module: the peers' dependencies never
		// enter edgeovn's go.mod.
		cmd := exec.CommandContext(ctx, "go", "install", "github.com/containernetworking/plugins/"+p+"@"+peerVersion)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOBIN="+k.BinDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", p, err, out)
		}
	}
	if b.daemonRunning() {
		p, err := b.rig.Daemon("edgeovn")
		if err != nil {
			return err
		}
		if err := p.Stop(); err != nil {
			return err
		}
	}
	list := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"bridge-ref","plugins":[
{"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":false,"ipam":{"type":"host-local","dataDir":%q,"ranges":[[{"subnet":"10.88.0.0/16"}]]}},
{"type":"portmap","capabilities":{"portMappings":true}}]}
`, filepath.Join(b.work, "host-local"))
	tmp := filepath.Join(k.ConfDir, "."+refConf+".tmp")
	if err := os.WriteFile(tmp, []byte(list), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(k.ConfDir, refConf)); err != nil {
		return err
	}
	return b.canary(ctx, "reference", netip.MustParsePrefix("10.88.0.0/16"))
}

func (b *bench) daemonRunning() bool {
	p, err := b.rig.Daemon("edgeovn")
	if err != nil {
		return false
	}
	select {
	case <-p.Done():
		return false
	default:
		return true
	}
}

// canary runs one pod (untimed) and waits until it is Running with an address from want:
// containerd has loaded the network's config, and the first pod's one-time costs are paid.
func (b *bench) canary(ctx context.Context, name string, want netip.Prefix) error {
	b.canaries++
	if _, err := b.createAtOnce(ctx, fmt.Sprintf("canary-%d", b.canaries), 1, want); err != nil {
		return fmt.Errorf("canary pod on %s: %w", name, err)
	}
	return nil
}
