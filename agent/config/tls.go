package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// OVNTLS loads the certificates for ssl: OVSDB endpoints (OVN's PKI: ovs-pki or the
// packages' /etc/ovn files); nil when none are configured. The daemon's roles and the
// diagnostic commands (agent/inspect: edgeovn status, edgeovn doctor) connect with it alike.
func (c *Config) OVNTLS() (*tls.Config, error) {
	if c.OVNCACert == "" && c.OVNCert == "" && c.OVNKey == "" {
		return nil, nil
	}
	if c.OVNCACert == "" || c.OVNCert == "" || c.OVNKey == "" {
		return nil, errors.New("ovn-ca-cert, ovn-cert and ovn-key: set all three or none")
	}
	ca, err := os.ReadFile(c.OVNCACert)
	if err != nil {
		return nil, fmt.Errorf("ovn-ca-cert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("ovn-ca-cert %s: no PEM certificate in it", c.OVNCACert)
	}
	pair, err := tls.LoadX509KeyPair(c.OVNCert, c.OVNKey)
	if err != nil {
		return nil, fmt.Errorf("ovn-cert %s / ovn-key %s: %w", c.OVNCert, c.OVNKey, err)
	}
	// OVN certificates name the role, not the host: verify the chain against the OVN CA only.
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: true, VerifyPeerCertificate: verifyChain(pool)}, nil
}

func verifyChain(pool *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("ovsdb server sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, b := range raw {
			cert, err := x509.ParseCertificate(b)
			if err != nil {
				return fmt.Errorf("parse ovsdb server certificate: %w", err)
			}
			certs[i] = cert
		}
		inter := x509.NewCertPool()
		for _, cert := range certs[1:] {
			inter.AddCert(cert)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter})
		return err
	}
}

func anySSL(endpoints ...string) bool {
	for _, e := range endpoints {
		if strings.HasPrefix(e, "ssl:") {
			return true
		}
	}
	return false
}
