package podsim

import (
	"context"
	"fmt"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// AddAttachment runs the ADD Multus makes for one of the pod's attachment networks: the
// NAD's config (conf, one plugin) on the interface ifName ("net1", ...), with the sandbox's
// CNI_ARGS, the plugin found in the bin dir by the config's type.
func (k *Kubelet) AddAttachment(ctx context.Context, sb *Sandbox, conf []byte, ifName string) (*types100.Result, error) {
	c, err := libcni.NetworkPluginConfFromBytes(conf)
	if err != nil {
		return nil, fmt.Errorf("attachment config: %w", err)
	}
	rc := k.runtimeConf(sb)
	rc.IfName, rc.CapabilityArgs = ifName, nil
	var res *types100.Result
	err = k.onHost(func() error {
		r, err := k.cni().AddNetwork(ctx, c, rc)
		if err != nil {
			return err
		}
		res, err = types100.NewResultFromResult(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cni add of %s for pod %s: %w", ifName, sb.Pod.Name, err)
	}
	return res, nil
}

// DelAttachment is AddAttachment's DEL.
func (k *Kubelet) DelAttachment(ctx context.Context, sb *Sandbox, conf []byte, ifName string) error {
	c, err := libcni.NetworkPluginConfFromBytes(conf)
	if err != nil {
		return fmt.Errorf("attachment config: %w", err)
	}
	rc := k.runtimeConf(sb)
	rc.IfName, rc.CapabilityArgs = ifName, nil
	if err := k.onHost(func() error { return k.cni().DelNetwork(ctx, c, rc) }); err != nil {
		return fmt.Errorf("cni del of %s for pod %s: %w", ifName, sb.Pod.Name, err)
	}
	return nil
}
