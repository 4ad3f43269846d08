package mqttbridge

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
	promconfig "github.com/prometheus/common/config"
)

// lockedBuffer collects log output from concurrent requests.
type lockedBuffer = testkit.SyncBuffer

// TestNoCredentialsLeak: the broker password and a printer's bearer token appear in no topic,
// no payload and no log line, at debug level, through a sent command and a printer that
// refuses a wrong token.
func TestNoCredentialsLeak(t *testing.T) {
	const password, token = "pw-SECRET-1234", "tok-SECRET-5678"
	sim, err := printersim.Start(printersim.WithPrinters("line1"), printersim.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), "#")
	dir := t.TempDir()
	cfg := Config{
		Broker: BrokerConfig{URL: bk.URL(), ClientID: "secrets", Username: "bridge",
			PasswordFile: writeFile(t, dir, "pw", password+"\n")},
		StateDir: dir, PollInterval: 20 * time.Millisecond,
		Printers: []PrinterConfig{
			{Name: "line1", URL: sim.URL, Printer: "line1", HTTPClientConfig: promconfig.HTTPClientConfig{
				Authorization: &promconfig.Authorization{Type: "Bearer", Credentials: token}}},
			{Name: "wrong", URL: sim.URL + "/", Printer: "line1", HTTPClientConfig: promconfig.HTTPClientConfig{
				Authorization: &promconfig.Authorization{Type: "Bearer", Credentials: token + "-wrong"}}},
		},
	}
	var logs lockedBuffer
	if _, err := New(cfg); err == nil {
		t.Fatal("two printers with one URL and two http_client_configs were accepted")
	}
	// The same simulator under another URL is another controller, with a client of its own.
	cfg.Printers[1].URL = strings.Replace(sim.URL, "127.0.0.1", "localhost", 1)
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	r := runBridge(t, b)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), printJobCmd("s1"))
	s.send(cmdTopic("wrong", "printJob"), printJobCmd("s2"))
	w.waitStates(resultTopic("line1"), "s1", StateQueued, StateSent)
	w.waitStates(resultTopic("wrong"), "s2", StateQueued, StateRejected)
	eventually(t, "wrong is unreachable", func() bool { return statusOf(t, w, "wrong")["reachable"] == false })
	r.stop(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.got {
		if strings.Contains(p.Topic+string(p.Payload), token) || strings.Contains(p.Topic, password) {
			t.Errorf("a credential on %s: %s", p.Topic, p.Payload)
		}
	}
	if l := logs.String(); strings.Contains(l, password) || strings.Contains(l, token) {
		t.Errorf("a credential in the log:\n%s", l)
	}
}

// TestEchoedTokenNotOnTopics: a printer's bearer token comes from a credentials_file through
// the http_client_config round tripper, which the SDK cannot see; the controller answers 401
// echoing the Authorization header raw, PHP-escaped (\/), as \u002f and percent-encoded. The
// rejected command's "error" on the result topic says why (the echo, redacted), and no topic,
// payload or log line holds 12 bytes in a row of the token in any of those spellings.
func TestEchoedTokenNotOnTopics(t *testing.T) {
	// The credentials file is rotated while the bridge runs: both tokens are echoed, and
	// neither may show.
	const token, rotated = "abc/DEF+ghi/JKL==tail-0123456789", "xyz/UVW+rst/OPQ==next-9876543210"
	var sawRotated atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		if a == "Bearer "+rotated {
			sawRotated.Store(true)
		}
		echo := a + "; " + strings.ReplaceAll(a, "/", `\/`) + "; " +
			strings.NewReplacer("/", `\u002f`, "+", `\u002b`).Replace(a) + "; " + url.QueryEscape(a)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"refused ` + echo + `"}`))
	}))
	defer front.Close()
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), "#")
	dir := t.TempDir()
	cfg := Config{
		Broker:   BrokerConfig{URL: bk.URL(), ClientID: "echo"},
		StateDir: dir, PollInterval: 20 * time.Millisecond,
		Printers: []PrinterConfig{{Name: "line1", URL: front.URL, Printer: "line1", HTTPClientConfig: promconfig.HTTPClientConfig{
			Authorization: &promconfig.Authorization{Type: "Bearer", CredentialsFile: writeFile(t, dir, "token", token+"\n")}}}},
	}
	var logs lockedBuffer
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	r := runBridge(t, b)
	w.waitOnline(1)
	newSender(t, bk.URL()).send(cmdTopic("line1", "printJob"), printJobCmd("e1"))
	w.waitStates(resultTopic("line1"), "e1", StateQueued, StateRejected)
	// Rotate as a secret manager does: a new file renamed over the old one, so no request
	// reads it half written.
	if err := os.Rename(writeFile(t, dir, "token.new", rotated+"\n"), filepath.Join(dir, "token")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the printer is sent the rotated token", sawRotated.Load)
	newSender(t, bk.URL()).send(cmdTopic("line1", "printJob"), printJobCmd("e2"))
	w.waitStates(resultTopic("line1"), "e2", StateQueued, StateRejected)
	r.stop(t)

	uEsc := regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
	views := func(s string) []string {
		j := uEsc.ReplaceAllStringFunc(strings.ReplaceAll(s, `\/`, "/"), func(m string) string {
			n, _ := strconv.ParseUint(m[2:], 16, 32)
			return string(rune(n))
		})
		out := []string{s, j}
		for _, v := range []string{s, j} {
			if p, err := url.QueryUnescape(strings.ReplaceAll(v, "+", "%2B")); err == nil {
				out = append(out, p)
			}
		}
		return out
	}
	check := func(what, text string) {
		t.Helper()
		for _, v := range views(text) {
			for _, tok := range []string{token, rotated} {
				for i := 0; i+12 <= len(tok); i++ {
					if strings.Contains(v, tok[i:i+12]) {
						t.Errorf("%s: %q shows in %s", what, tok[i:i+12], text)
						return
					}
				}
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	shown := map[string]bool{}
	for _, p := range w.got {
		check("topic "+p.Topic, p.Topic+" "+string(p.Payload))
		pl := string(p.Payload)
		if strings.Contains(pl, "refused") && strings.Contains(pl, "[REDACTED]") {
			for _, id := range []string{`"e1"`, `"e2"`} {
				shown[id] = shown[id] || strings.Contains(pl, id)
			}
		}
	}
	if !shown[`"e1"`] || !shown[`"e2"`] {
		t.Errorf(`the "error" of e1 and e2 do not both hold the printer's echo (%v), so the check proves little`, shown)
	}
	check("log", logs.String())
}

// TestOAuth2TokenNotOnTopics: a printer behind OAuth2 (client credentials) answers 400 echoing
// the Authorization header, which holds the access token the round tripper fetched: a value
// no configuration and no file holds. The rejected command's "error" says why, and no topic,
// payload or log line holds 12 bytes in a row of the token (nor of the client secret).
func TestOAuth2TokenNotOnTopics(t *testing.T) {
	const secret, access = "client-SECRET-0123456789", "eyJhbGciOi.access-TOKEN.9f8e7d6c5b4a3210"
	var issued atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" {
			issued.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"` + access + `","token_type":"Bearer","expires_in":3600}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"message":"bad request, you sent ` + r.Header.Get("Authorization") + `"}`))
	}))
	defer front.Close()
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), "#")
	dir := t.TempDir()
	cfg := Config{
		Broker:   BrokerConfig{URL: bk.URL(), ClientID: "oauth2"},
		StateDir: dir, PollInterval: 20 * time.Millisecond,
		Printers: []PrinterConfig{{Name: "line1", URL: front.URL, Printer: "line1", HTTPClientConfig: promconfig.HTTPClientConfig{
			OAuth2: &promconfig.OAuth2{ClientID: "bridge", ClientSecret: secret, TokenURL: front.URL + "/oauth/token"}}}},
	}
	var logs lockedBuffer
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	r := runBridge(t, b)
	w.waitOnline(1)
	newSender(t, bk.URL()).send(cmdTopic("line1", "printJob"), printJobCmd("o1"))
	w.waitStates(resultTopic("line1"), "o1", StateQueued, StateRejected)
	r.stop(t)
	if issued.Load() == 0 {
		t.Fatal("no access token was fetched, so the test proves nothing")
	}
	check := func(what, text string) {
		t.Helper()
		for _, tok := range []string{access, secret} {
			for i := 0; i+12 <= len(tok); i++ {
				if strings.Contains(text, tok[i:i+12]) {
					t.Errorf("%s: %q shows in %s", what, tok[i:i+12], text)
					return
				}
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	shown := false
	for _, p := range w.got {
		check("topic "+p.Topic, p.Topic+" "+string(p.Payload))
		shown = shown || strings.Contains(string(p.Payload), "you sent ") && strings.Contains(string(p.Payload), "[REDACTED]")
	}
	if !shown {
		t.Error(`no result holds the printer's echo, redacted ("you sent [REDACTED]"), so the check proves little`)
	}
	check("log", logs.String())
}
