// Package tlstest makes the certificates of a test's TLS servers and
// clients: a certificate authority of its own, a server certificate for
// 127.0.0.1 and localhost, and client certificates, as PEM files in a
// directory of the test.
package tlstest

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
	"testing"
	"time"
)

// Files are the PEM files of one certificate authority and the
// certificates it signed.
type Files struct {
	Dir          string
	CA           string // the authority's certificate
	ServerCert   string // for 127.0.0.1 and localhost
	ServerKey    string
	ClientCert   string // for the user named to New
	ClientKey    string
	OtherCA      string // an authority that signed nothing here: verifying with it fails
	caCert       *x509.Certificate
	caKey        *ecdsa.PrivateKey
	serialNumber int64
}

// New makes an authority, a server certificate and a client certificate
// whose common name is user (PostgreSQL's cert authentication maps it to
// the role), in a temporary directory of the test; the keys are 0600.
func New(t testing.TB, user string) *Files {
	t.Helper()
	f := &Files{Dir: t.TempDir()}
	var caDER []byte
	f.caCert, f.caKey, caDER = f.authority(t, "idsql test CA")
	f.CA = f.write(t, "ca.pem", "CERTIFICATE", caDER)
	_, _, otherDER := f.authority(t, "another CA")
	f.OtherCA = f.write(t, "other-ca.pem", "CERTIFICATE", otherDER)
	f.ServerCert, f.ServerKey = f.leaf(t, "server", "localhost", x509.ExtKeyUsageServerAuth)
	f.ClientCert, f.ClientKey = f.leaf(t, "client", user, x509.ExtKeyUsageClientAuth)
	return f
}

// authority makes a self-signed certificate authority named name.
func (f *Files) authority(t testing.TB, name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, key := f.sign(t, tmpl, nil, nil)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, der
}

// leaf makes a certificate of the authority for cn, usable for usage,
// and writes it and its key as NAME.pem and NAME.key.
func (f *Files) leaf(t testing.TB, name, cn string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames, tmpl.IPAddresses = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, key := f.sign(t, tmpl, f.caCert, f.caKey)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return f.write(t, name+".pem", "CERTIFICATE", der), f.write(t, name+".key", "EC PRIVATE KEY", keyDER)
}

// sign makes a key and a certificate of tmpl for it, valid from an hour
// ago for a day, signed by parent with parentKey (nil: self-signed).
func (f *Files) sign(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f.serialNumber++
	tmpl.SerialNumber = big.NewInt(f.serialNumber)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func (f *Files) write(t testing.TB, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(f.Dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
