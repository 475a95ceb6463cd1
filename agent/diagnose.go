package agent

import (
	"crypto/tls"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// The diagnostic commands (edgeovn status, edgeovn doctor) connect the way the daemon does.

// OVNTLS is the TLS configuration for ssl: database endpoints; nil when none is ssl:.
func (c *Config) OVNTLS() (*tls.Config, error) { return c.ovnTLS() }

// KubeClient loads the kubeconfig at path ("" for in-cluster) once, without waiting for it.
func KubeClient(path string) (*kubeapi.Client, error) { return kubeClient(path) }
