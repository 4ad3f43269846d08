package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Usage says what a certificate from (*CA).Issue is for.
type Usage int

const (
	// Server is a TLS server certificate for 127.0.0.1, the loopback address tests listen on.
	Server Usage = iota + 1
	// Client is a TLS client certificate, as an mTLS printer or proxy asks for.
	Client
)

// Cert is a certificate and its ECDSA P-256 key in every form a test needs: parsed, ready for
// a tls.Config, and PEM-encoded for a program that reads files.
type Cert struct {
	// Leaf is the parsed certificate.
	Leaf *x509.Certificate
	// TLS is the certificate and key for tls.Config.Certificates.
	TLS tls.Certificate
	// CertPEM and KeyPEM are the certificate and its key (SEC 1, "EC PRIVATE KEY") as PEM.
	CertPEM, KeyPEM []byte

	name string
	key  *ecdsa.PrivateKey
}

// CA is a certificate authority made for one test: its certificate is self-signed and valid
// from an hour ago to an hour from now.
type CA struct {
	Cert
}

// NewCA returns a fresh certificate authority whose files, written by WriteFiles, are named
// ca.pem and ca-key.pem.
func NewCA(t testing.TB) *CA {
	t.Helper()
	tmpl := &x509.Certificate{IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	return &CA{*newCert(t, "ca", tmpl, nil)}
}

// Pool returns a certificate pool holding the CA alone, for tls.Config's RootCAs or ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	return pool
}

// Issue returns a certificate for usage with common name name, signed by ca. WriteFiles
// names its files after name.
func (ca *CA) Issue(t testing.TB, name string, usage Usage) *Cert {
	t.Helper()
	tmpl := &x509.Certificate{KeyUsage: x509.KeyUsageDigitalSignature}
	switch usage {
	case Server:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	case Client:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	default:
		t.Fatalf("testkit: unknown certificate usage %d", usage)
	}
	return newCert(t, name, tmpl, &ca.Cert)
}

// WriteFiles writes the certificate and its key as PEM files NAME.pem and NAME-key.pem in dir
// (readable by the owner alone) and returns their paths.
func (c *Cert) WriteFiles(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, c.name+".pem"), filepath.Join(dir, c.name+"-key.pem")
	if err := os.WriteFile(certFile, c.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, c.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// newCert completes tmpl (subject, random serial, validity) and signs it with parent's key,
// or with its own when parent is nil.
func newCert(t testing.TB, name string, tmpl *x509.Certificate, parent *Cert) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.Subject = pkix.Name{CommonName: name}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	signerCert, signerKey := tmpl, key
	if parent != nil {
		signerCert, signerKey = parent.Leaf, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{
		Leaf:    leaf,
		TLS:     tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		name:    name,
		key:     key,
	}
}
