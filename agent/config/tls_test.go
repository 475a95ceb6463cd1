package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type testCert struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

func newCert(t *testing.T, name string, parent *testCert) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: parent == nil, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	signer, signKey := tmpl, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCert{cert: cert, der: der, key: key}
}

func writePEM(t *testing.T, path, kind string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: b}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOVNTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCert(t, "ovn-ca", nil)
	client := newCert(t, "edgeovn", &ca)
	keyDER, _ := x509.MarshalECPrivateKey(client.key)
	c := Default()
	if cfg, err := c.OVNTLS(); cfg != nil || err != nil {
		t.Fatalf("no files: %v, %v; want nil, nil", cfg, err)
	}
	c.OVNCACert = writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.der)
	if _, err := c.OVNTLS(); err == nil || !strings.Contains(err.Error(), "all three or none") {
		t.Fatalf("partial settings: %v", err)
	}
	c.OVNCert = writePEM(t, filepath.Join(dir, "cert.pem"), "CERTIFICATE", client.der)
	c.OVNKey = writePEM(t, filepath.Join(dir, "key.pem"), "EC PRIVATE KEY", keyDER)
	cfg, err := c.OVNTLS()
	if err != nil || len(cfg.Certificates) != 1 {
		t.Fatalf("OVNTLS: %v", err)
	}
	server := newCert(t, "ovnnb", &ca)
	if err := cfg.VerifyPeerCertificate([][]byte{server.der}, nil); err != nil {
		t.Fatalf("server signed by the OVN CA refused: %v", err)
	}
	rogue := newCert(t, "rogue", nil)
	if err := cfg.VerifyPeerCertificate([][]byte{rogue.der}, nil); err == nil {
		t.Fatal("server certificate from another CA accepted")
	}
	c.OVNCACert = writePEM(t, filepath.Join(dir, "bad.pem"), "NOTHING", nil)
	os.WriteFile(c.OVNCACert, []byte("garbage"), 0o600)
	if _, err := c.OVNTLS(); err == nil || !strings.Contains(err.Error(), "bad.pem") {
		t.Fatalf("garbage CA file: %v", err)
	}
}

func TestValidateSSLNeedsCertificates(t *testing.T) {
	c := Default()
	c.NodeName = "n1"
	c.NBEndpoints = []string{"ssl:192.0.2.1:6641"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ovn-ca-cert") {
		t.Fatalf("ssl endpoint without certificates: %v", err)
	}
}
