package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what the API server needs to serve and to sign service account
// tokens, written into a directory.
type pki struct {
	caCert, servingCert, servingKey, saPublic, saPrivate string
}

// makePKI writes a fresh CA, a serving certificate for 127.0.0.1 and
// localhost signed by it, and a service account key pair into dir.
func makePKI(dir string) (pki, error) {
	p := pki{
		caCert:      filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saPublic:    filepath.Join(dir, "sa.pub"),
		saPrivate:   filepath.Join(dir, "sa.key"),
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubesched-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return p, err
	}
	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	files := []struct {
		path, kind string
		der        func() ([]byte, error)
	}{
		{p.caCert, "CERTIFICATE", func() ([]byte, error) { return caDER, nil }},
		{p.servingCert, "CERTIFICATE", func() ([]byte, error) { return servingDER, nil }},
		{p.servingKey, "EC PRIVATE KEY", func() ([]byte, error) { return x509.MarshalECPrivateKey(servingKey) }},
		{p.saPrivate, "EC PRIVATE KEY", func() ([]byte, error) { return x509.MarshalECPrivateKey(saKey) }},
		{p.saPublic, "PUBLIC KEY", func() ([]byte, error) { return x509.MarshalPKIXPublicKey(&saKey.PublicKey) }},
	}
	for _, f := range files {
		der, err := f.der()
		if err != nil {
			return p, err
		}
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: der}), 0o600); err != nil {
			return p, err
		}
	}
	return p, nil
}
