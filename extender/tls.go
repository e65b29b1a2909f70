package extender

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	configv1 "k8s.io/kube-scheduler/config/v1"
)

// tlsConfig builds the client side of TLS for cfg as kube-scheduler does.
// It returns nil when nothing is configured, so that https URLs verify the
// server against the system's roots.
//
// kube-scheduler's rules, kept here: enableHTTPS without a CA skips
// verifying the server (enableHTTPS is otherwise only a hint: the scheme
// of urlPrefix decides); insecure together with a CA is an error; data
// takes precedence over the file of the same item; a client certificate
// needs both certificate and key, and is ignored otherwise; a client
// certificate given as files only is read again at every handshake, so
// that it can be rotated.
func tlsConfig(cfg *configv1.Extender) (*tls.Config, error) {
	var tc configv1.ExtenderTLSConfig
	if cfg.TLSConfig != nil {
		tc = *cfg.TLSConfig
	}
	hasCA := len(tc.CAData) > 0 || tc.CAFile != ""
	hasCert := (len(tc.CertData) > 0 || tc.CertFile != "") && (len(tc.KeyData) > 0 || tc.KeyFile != "")
	insecure := tc.Insecure || (cfg.EnableHTTPS && !hasCA)
	if !hasCA && !hasCert && !insecure && tc.ServerName == "" {
		return nil, nil
	}
	if hasCA && insecure {
		return nil, errors.New("tlsConfig: specifying a root certificates file with the insecure flag is not allowed")
	}
	out := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The configuration asks for it: tlsConfig.insecure, or
		// enableHTTPS without a CA, as in kube-scheduler.
		InsecureSkipVerify: insecure, //nolint:gosec
		ServerName:         tc.ServerName,
	}
	if hasCA {
		ca, err := dataOrFile(tc.CAData, tc.CAFile, "caFile")
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("tlsConfig: unable to load root certificates: caData or caFile holds no PEM certificate")
		}
		out.RootCAs = pool
	}
	if hasCert {
		load := func() (*tls.Certificate, error) {
			cert, err := dataOrFile(tc.CertData, tc.CertFile, "certFile")
			if err != nil {
				return nil, err
			}
			key, err := dataOrFile(tc.KeyData, tc.KeyFile, "keyFile")
			if err != nil {
				return nil, err
			}
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("tlsConfig: client certificate and key: %w", err)
			}
			return &pair, nil
		}
		// Read once now, so that a bad certificate is reported when the
		// client is built rather than at the first call.
		static, err := load()
		if err != nil {
			return nil, err
		}
		filesOnly := len(tc.CertData) == 0 && len(tc.KeyData) == 0
		out.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if filesOnly {
				return load()
			}
			return static, nil
		}
	}
	return out, nil
}

// dataOrFile returns data if set, else the contents of file.
func dataOrFile(data []byte, file, what string) ([]byte, error) {
	if len(data) > 0 {
		return data, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tlsConfig: reading %s: %w", what, err)
	}
	return b, nil
}
