// Package tlsca keeps the local hub's TLS material: a private certificate
// authority and a server certificate for the loopback names, both created on
// first start in the hub's data directory and reused afterwards.
//
// Files in the directory (the names are a contract; scripts and the
// connector's config point at ca.pem):
//
//	ca.pem          the CA certificate (clients trust only this file)
//	ca-key.pem      the CA private key (mode 0600)
//	server.pem      the server certificate followed by the CA certificate
//	server-key.pem  the server private key (mode 0600)
//
// Keys are ECDSA P-256. The CA is valid for about ten years; the server
// certificate for one year, and it is reissued on start when it has expired,
// will expire within ServerRenewBefore, is not signed by the current CA, or
// lacks a requested name.
package tlsca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File names inside the data directory.
const (
	CAFileName        = "ca.pem"
	CAKeyFileName     = "ca-key.pem"
	ServerFileName    = "server.pem"
	ServerKeyFileName = "server-key.pem"
)

// CACommonName is the subject common name of the hub's CA certificate.
const CACommonName = "apconnect local hub CA"

// Validity periods and the renewal margin.
const (
	CAValidity        = 10 * 365 * 24 * time.Hour
	ServerValidity    = 365 * 24 * time.Hour
	ServerRenewBefore = 7 * 24 * time.Hour
	// CARenewBefore: a CA this close to expiry is replaced (and with it every
	// client's trust file), rather than issuing a server certificate that
	// would outlive it.
	CARenewBefore = 30 * 24 * time.Hour
)

// LoopbackHosts returns the names every server certificate covers.
func LoopbackHosts() []string { return []string{"127.0.0.1", "::1", "localhost"} }

// Material is the loaded TLS state of a hub.
type Material struct {
	// CAFile is the absolute path of ca.pem.
	CAFile string
	// CA is the parsed CA certificate.
	CA *x509.Certificate
	// Pool holds only the CA certificate: what a client trusting the hub uses.
	Pool *x509.CertPool
	// Certificate is the server certificate chain and key for tls.Config.
	Certificate tls.Certificate
	// Leaf is the parsed server certificate.
	Leaf *x509.Certificate
	// Created lists the files written by this call (empty on a plain reuse).
	Created []string
}

// Ensure loads the CA and server certificate from dir, creating or
// reissuing them as needed, so that the server certificate is valid at now and
// covers LoopbackHosts plus extraHosts (IP literals or DNS names). dir must
// exist.
func Ensure(dir string, now time.Time, extraHosts ...string) (*Material, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	hosts := LoopbackHosts()
	for _, h := range extraHosts {
		h = strings.Trim(strings.ToLower(h), "[]")
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	m := &Material{CAFile: filepath.Join(dir, CAFileName)}

	caCert, caKey, err := loadPair(dir, CAFileName, CAKeyFileName)
	if err != nil || !caUsable(caCert, caKey, now) {
		caCert, caKey, err = newCA(now)
		if err != nil {
			return nil, err
		}
		if err := writePair(dir, CAFileName, CAKeyFileName, [][]byte{caCert.Raw}, caKey); err != nil {
			return nil, err
		}
		m.Created = append(m.Created, CAFileName, CAKeyFileName)
		// A new CA invalidates any server certificate signed by the old one.
		_ = os.Remove(filepath.Join(dir, ServerFileName))
	}
	m.CA = caCert
	m.Pool = x509.NewCertPool()
	m.Pool.AddCert(caCert)

	leaf, leafKey, err := loadPair(dir, ServerFileName, ServerKeyFileName)
	if err != nil || !serverUsable(leaf, leafKey, caCert, m.Pool, hosts, now) {
		leaf, leafKey, err = newServer(caCert, caKey, hosts, now)
		if err != nil {
			return nil, err
		}
		if err := writePair(dir, ServerFileName, ServerKeyFileName, [][]byte{leaf.Raw, caCert.Raw}, leafKey); err != nil {
			return nil, err
		}
		m.Created = append(m.Created, ServerFileName, ServerKeyFileName)
	}
	m.Leaf = leaf
	m.Certificate = tls.Certificate{
		Certificate: [][]byte{leaf.Raw, caCert.Raw},
		PrivateKey:  leafKey,
		Leaf:        leaf,
	}
	return m, nil
}

// caUsable reports whether a loaded CA can keep signing: it is a CA, it is
// ours, its key matches, and it is not about to expire.
func caUsable(cert *x509.Certificate, key *ecdsa.PrivateKey, now time.Time) bool {
	return cert.IsCA && cert.Subject.CommonName == CACommonName &&
		keyMatches(cert, key) &&
		!now.Before(cert.NotBefore) && now.Add(CARenewBefore).Before(cert.NotAfter)
}

// serverUsable reports whether a loaded server certificate can be served.
func serverUsable(leaf *x509.Certificate, key *ecdsa.PrivateKey, ca *x509.Certificate, pool *x509.CertPool, hosts []string, now time.Time) bool {
	if !keyMatches(leaf, key) || now.Before(leaf.NotBefore) || !now.Add(ServerRenewBefore).Before(leaf.NotAfter) {
		return false
	}
	if leaf.CheckSignatureFrom(ca) != nil {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err == nil
}

func keyMatches(cert *x509.Certificate, key *ecdsa.PrivateKey) bool {
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	return ok && pub.Equal(&key.PublicKey)
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: CACommonName, Organization: []string{"apconnect"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func newServer(ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	notAfter := now.Add(ServerValidity)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "apconnect local hub", Organization: []string{"apconnect"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("create server certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// loadPair reads a certificate file (its first block) and an EC key file.
func loadPair(dir, certName, keyName string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, certName))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, keyName))
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, nil, fmt.Errorf("%s: no CERTIFICATE block", certName)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certName, err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil || kb.Type != "EC PRIVATE KEY" {
		return nil, nil, fmt.Errorf("%s: no EC PRIVATE KEY block", keyName)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyName, err)
	}
	return cert, key, nil
}

// writePair writes the key first (mode 0600) and then the certificates
// (mode 0644), each through a temporary file and a rename so that a crash
// never leaves a half-written file behind.
func writePair(dir, certName, keyName string, certs [][]byte, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, keyName), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, c := range certs {
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c}); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, certName), buf.Bytes(), 0o644)
}

func writeFile(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// ErrNoCA is returned by LoadPool when the CA file is missing or holds no
// certificate.
var ErrNoCA = errors.New("no CA certificate")

// LoadPool reads a PEM CA file (such as DIR/ca.pem) into a certificate pool
// that holds only its certificates: what a client uses to trust the hub.
func LoadPool(caFile string) (*x509.CertPool, error) {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: %w", caFile, ErrNoCA)
	}
	return pool, nil
}
