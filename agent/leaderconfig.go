package agent

import (
	"path/filepath"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/leader"
	"github.com/edgeovn/edgeovn/agent/node"
)

// leaderConfig is the election's configuration under cfg: the one place package leader's
// Config is filled. The grant of the API rights is recorded beside the CNI socket, where
// node.Cleanup removes it.
func leaderConfig(cfg config.Config) leader.Config {
	return leader.Config{
		NodeName:       cfg.NodeName,
		LeaseNamespace: cfg.LeaseNamespace,
		LeaseName:      cfg.LeaseName,
		LeaseDuration:  cfg.LeaseDuration,
		RenewDeadline:  cfg.RenewDeadline,
		RetryPeriod:    cfg.RetryPeriod,
		Kubeconfig:     cfg.Kubeconfig,
		RightsRecord:   filepath.Join(filepath.Dir(cfg.CNISocket), node.RightsRecordName),
		NBEndpoints:    cfg.NBEndpoints,
		Services:       cfg.Services,
		NetworkPolicy:  cfg.NetworkPolicy,
	}
}
