package main

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
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCert is a certificate and its key, as parsed and as PEM files.
type testCert struct {
	cert              *x509.Certificate
	key               *ecdsa.PrivateKey
	certFile, keyFile string
}

// newTestCert makes a certificate signed by parent (self-signed when parent is nil) and writes
// it and its key as PEM files in dir.
func newTestCert(t *testing.T, dir, name string, parent *testCert, tmpl *x509.Certificate) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Subject = pkix.Name{CommonName: name}
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(time.Hour)
	signerCert, signerKey := tmpl, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCert{cert: cert, key: key, certFile: filepath.Join(dir, name+".pem"), keyFile: filepath.Join(dir, name+"-key.pem")}
	if err := os.WriteFile(tc.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tc.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tc
}

// TestClientCertificate runs labelctl against a TLS server that requires a client certificate
// signed by its own CA, as a printer behind an mTLS proxy does: with --cert and --cert-key (or
// their environment variables) it answers; without, the handshake is refused and labelctl
// exits 1; a certificate without its key, or a key that does not match, is a usage error.
func TestClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCert(t, dir, "test-ca", nil, &x509.Certificate{SerialNumber: big.NewInt(1), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
	server := newTestCert(t, dir, "printer", ca, &x509.Certificate{SerialNumber: big.NewInt(2), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	client := newTestCert(t, dir, "line-pc", ca, &x509.Certificate{SerialNumber: big.NewInt(3),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	stranger := newTestCert(t, dir, "stranger", nil, &x509.Certificate{SerialNumber: big.NewInt(4),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})

	var mu sync.Mutex
	var peers []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		peers = append(peers, r.TLS.PeerCertificates[0].Subject.CommonName)
		mu.Unlock()
		if r.URL.Path != "/api/v3/printCounters" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"triggers":7,"triggerBounces":1,"printedLabels":6}`)
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	pair, err := tls.LoadX509KeyPair(server.certFile, server.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the test
	srv.StartTLS()
	defer srv.Close()

	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	want := "TRIGGERS  BOUNCES  PRINTED\n7         1        6\n"
	r := cli(t, ctx, env, "", "--ca-cert", ca.certFile, "--cert", client.certFile, "--cert-key", client.keyFile, "counters").ok(t)
	if r.stdout != want {
		t.Errorf("with --cert: %q", r.stdout)
	}
	env2 := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_CERT": client.certFile, "LABELPRINTER_KEY": client.keyFile}
	if r := cli(t, ctx, env2, "", "--ca-cert", ca.certFile, "counters").ok(t); r.stdout != want {
		t.Errorf("with LABELPRINTER_CERT: %q", r.stdout)
	}
	mu.Lock()
	if len(peers) != 2 || peers[0] != "line-pc" || peers[1] != "line-pc" {
		t.Errorf("the server saw client certificates %q", peers)
	}
	mu.Unlock()

	for _, args := range [][]string{
		{"--ca-cert", ca.certFile, "counters"},
		{"--ca-cert", ca.certFile, "--cert", stranger.certFile, "--cert-key", stranger.keyFile, "counters"},
	} {
		r := cli(t, ctx, env, "", append([]string{"--timeout", "20s"}, args...)...)
		if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1", args, r.code, r.stdout, r.stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cert", client.certFile, "counters"}, "labelctl: --cert needs --cert-key (or LABELPRINTER_KEY), the file with its private key\n"},
		{[]string{"--cert", client.certFile, "--cert-key", stranger.keyFile, "counters"}, "labelctl: --cert " + client.certFile + ", --cert-key " + stranger.keyFile + ": tls: private key does not match public key\n"},
		{[]string{"--cert", filepath.Join(dir, "missing.pem"), "--cert-key", client.keyFile, "counters"}, "labelctl: --cert " + filepath.Join(dir, "missing.pem") + ", --cert-key " + client.keyFile + ": open " + filepath.Join(dir, "missing.pem") + ": no such file or directory\n"},
	} {
		r := cli(t, ctx, env, "", tc.args...)
		if r.code != 2 || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	// The key's contents never reach a message.
	keyPEM, _ := os.ReadFile(client.keyFile)
	keyBody := strings.Split(string(keyPEM), "\n")[1]
	r = cli(t, ctx, env, "", "--cert", client.keyFile, "--cert-key", client.certFile, "counters")
	if r.code != 2 || strings.Contains(r.stderr, keyBody) {
		t.Errorf("swapped files: exit %d, %q", r.code, r.stderr)
	}
}

// TestVerboseAnswers holds -v to a line per attempt: a GET answered 503 and then 200 logs both
// answers, and a refused connection logs the error in place of a status.
func TestVerboseAnswers(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"triggers":1,"triggerBounces":0,"printedLabels":1}`)
	}))
	defer srv.Close()
	r := cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": srv.URL}, "", "-v", "counters").ok(t)
	answers := regexp.MustCompile(`msg="labelprinter answer" method=GET path=/api/v3/printCounters duration=\S+ status=(\d+)`).FindAllStringSubmatch(r.stderr, -1)
	if len(answers) != 2 || answers[0][1] != "503" || answers[1][1] != "200" {
		t.Errorf("answers %q in\n%s", answers, r.stderr)
	}
	r = cli(t, context.Background(), map[string]string{"LABELPRINTER_URL": "http://127.0.0.1:1"}, "", "-v", "--timeout", "2s", "counters")
	if r.code != 1 || !regexp.MustCompile(`msg="labelprinter answer" method=GET path=/api/v3/printCounters duration=\S+ error=".*refused`).MatchString(r.stderr) {
		t.Errorf("refused connection: exit %d\n%s", r.code, r.stderr)
	}
}
