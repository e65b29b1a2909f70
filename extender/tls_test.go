package extender_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/extender"
)

// clientCert returns a self-signed client certificate and its key, PEM.
func clientCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "kube-scheduler"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// tlsExtender is an HTTPS extender that answers filter calls with no node;
// with clientAuth it requires a client certificate.
func tlsExtender(t *testing.T, clientAuth bool) (url string, caPEM []byte) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	if clientAuth {
		srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func TestTLS(t *testing.T) {
	t.Parallel()
	certPEM, keyPEM := clientCert(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		clientAuth bool
		cfg        func(ca []byte) (https bool, tc *configv1.ExtenderTLSConfig)
		wantNew    string // error from New
		wantCall   string // error from the call
	}{
		{"enableHTTPS without a CA does not verify the server", false,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) { return true, nil }, "", ""},
		{"a CA verifies the server", false,
			func(ca []byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CAData: ca}
			}, "", ""},
		{"without enableHTTPS or a CA the system roots do not know the server", false,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) { return false, nil }, "", "certificate"},
		{"insecure with a CA is refused", false,
			func(ca []byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{Insecure: true, CAData: ca}
			}, "specifying a root certificates file with the insecure flag is not allowed", ""},
		{"a CA that is not PEM is refused", false,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CAData: []byte("not pem")}
			}, "unable to load root certificates", ""},
		{"a missing CA file is refused", false,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CAFile: filepath.Join(dir, "missing.pem")}
			}, "reading caFile", ""},
		{"a client certificate from data", true,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CertData: certPEM, KeyData: keyPEM}
			}, "", ""},
		{"a client certificate from files", true,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CertFile: certFile, KeyFile: keyFile}
			}, "", ""},
		{"a certificate without its key is ignored, as in kube-scheduler", true,
			func([]byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CertData: certPEM}
			}, "", "certificate"},
		{"a key that does not match is refused", false,
			func(ca []byte) (bool, *configv1.ExtenderTLSConfig) {
				return true, &configv1.ExtenderTLSConfig{CertData: certPEM, KeyData: ca}
			}, "client certificate and key", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, ca := tlsExtender(t, tc.clientAuth)
			https, tlsCfg := tc.cfg(ca)
			c, err := extender.New(configv1.Extender{URLPrefix: url, FilterVerb: "filter", EnableHTTPS: https, TLSConfig: tlsCfg})
			if tc.wantNew != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantNew) {
					t.Errorf("New: err = %v, want %q", err, tc.wantNew)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Filter(context.Background(), testPod, testNodes())
			switch {
			case tc.wantCall == "" && err != nil:
				t.Errorf("call failed: %v", err)
			case tc.wantCall != "" && (err == nil || !strings.Contains(err.Error(), tc.wantCall)):
				t.Errorf("call: err = %v, want %q", err, tc.wantCall)
			}
		})
	}
}
