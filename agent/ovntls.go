package agent

import "crypto/tls"

// OVNTLS is the TLS configuration for ssl: database endpoints; nil when none is ssl:. The
// diagnostic commands (agent/inspect: edgeovn status, edgeovn doctor) connect with it the
// way the daemon does.
func (c *Config) OVNTLS() (*tls.Config, error) { return c.ovnTLS() }
