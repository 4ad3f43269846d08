package main

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
)

// TestClientCertificate runs labelctl against a TLS server that requires a client certificate
// signed by its own CA, as a printer behind an mTLS proxy does: with --cert and --cert-key (or
// their environment variables) it answers; without, the handshake is refused and labelctl
// exits 1; a certificate without its key, or a key that does not match, is a usage error.
func TestClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t)
	caFile, _ := ca.WriteFiles(t, dir)
	server := ca.Issue(t, "printer", testkit.Server)
	clientCert, clientKey := ca.Issue(t, "line-pc", testkit.Client).WriteFiles(t, dir)
	strangerCert, strangerKey := testkit.NewCA(t).Issue(t, "stranger", testkit.Client).WriteFiles(t, dir)

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
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), Certificates: []tls.Certificate{server.TLS}, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the test
	srv.StartTLS()
	defer srv.Close()

	ctx := context.Background()
	env := map[string]string{"LABELPRINTER_URL": srv.URL}
	want := "TRIGGERS  BOUNCES  PRINTED\n7         1        6\n"
	r := cli(t, ctx, env, "", "--ca-cert", caFile, "--cert", clientCert, "--cert-key", clientKey, "counters").ok(t)
	if r.stdout != want {
		t.Errorf("with --cert: %q", r.stdout)
	}
	env2 := map[string]string{"LABELPRINTER_URL": srv.URL, "LABELPRINTER_CERT": clientCert, "LABELPRINTER_KEY": clientKey}
	if r := cli(t, ctx, env2, "", "--ca-cert", caFile, "counters").ok(t); r.stdout != want {
		t.Errorf("with LABELPRINTER_CERT: %q", r.stdout)
	}
	mu.Lock()
	if len(peers) != 2 || peers[0] != "line-pc" || peers[1] != "line-pc" {
		t.Errorf("the server saw client certificates %q", peers)
	}
	mu.Unlock()

	for _, args := range [][]string{
		{"--ca-cert", caFile, "counters"},
		{"--ca-cert", caFile, "--cert", strangerCert, "--cert-key", strangerKey, "counters"},
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
		{[]string{"--cert", clientCert, "counters"}, "labelctl: --cert needs --cert-key (or LABELPRINTER_KEY), the file with its private key\n"},
		{[]string{"--cert", clientCert, "--cert-key", strangerKey, "counters"}, "labelctl: --cert " + clientCert + ", --cert-key " + strangerKey + ": tls: private key does not match public key\n"},
		{[]string{"--cert", filepath.Join(dir, "missing.pem"), "--cert-key", clientKey, "counters"}, "labelctl: --cert " + filepath.Join(dir, "missing.pem") + ", --cert-key " + clientKey + ": open " + filepath.Join(dir, "missing.pem") + ": no such file or directory\n"},
	} {
		r := cli(t, ctx, env, "", tc.args...)
		if r.code != 2 || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	// The key's contents never reach a message.
	keyPEM, _ := os.ReadFile(clientKey)
	keyBody := strings.Split(string(keyPEM), "\n")[1]
	r = cli(t, ctx, env, "", "--cert", clientKey, "--cert-key", clientCert, "counters")
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
