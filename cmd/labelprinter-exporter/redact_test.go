package main

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// echoViews returns s as written and decoded the ways a printer may have encoded what it echoed
// (JSON \/ and \uXXXX, percent, either over the other), so that a check on them cannot be fooled
// by an escape the redaction missed.
func echoViews(s string) []string {
	uEsc := regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
	pEsc := regexp.MustCompile(`%([0-9a-fA-F]{2})`)
	unJSON := func(s string) string {
		s = strings.ReplaceAll(s, `\/`, "/")
		return uEsc.ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.ParseUint(m[2:], 16, 32)
			return string(rune(n))
		})
	}
	unPct := func(s string) string {
		return pEsc.ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.ParseUint(m[1:], 16, 8)
			return string([]byte{byte(n)})
		})
	}
	return []string{s, unJSON(s), unPct(s), unJSON(unPct(s)), unPct(unJSON(s))}
}

// leaked returns 12 consecutive bytes of secret (all of it when shorter) that a view of text
// holds.
func leaked(text, secret string) (string, bool) {
	n := min(12, len(secret))
	for _, v := range echoViews(text) {
		for i := 0; i+n <= len(secret); i++ {
			if strings.Contains(v, secret[i:i+n]) {
				return secret[i : i+n], true
			}
		}
	}
	return "", false
}

// TestEchoedCredentialsNeverShow: a module whose round tripper adds a bearer token from a
// credentials_file, and one with basic auth from a password_file, probe a printer that answers
// 401 echoing the Authorization header it received, and its credential part alone, raw,
// JSON-escaped as PHP (\/) and as \u002f, percent-encoded, and straddling the SDK's 64 KiB cut
// of an error body. Neither the debug answer, nor the exporter's log, nor the probe's metrics
// hold 12 consecutive bytes of the credential, in any of those spellings; a rotated credentials
// file is covered from the next probe.
func TestEchoedCredentialsNeverShow(t *testing.T) {
	const token = "abc/DEF+ghi/JKL==tail-0123456789"
	const rotated = "xyz/QRS+tuv/WXY==next-9876543210"
	const user, pass = "operator", "pa ss/w+rd?~-123456"
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	if !strings.ContainsAny(basic, "/+") {
		t.Fatalf("%s: pick a password whose base64 holds / or +", basic)
	}
	spellings := []struct {
		name  string
		spell func(string) string
	}{
		{"raw", func(s string) string { return s }},
		{`JSON \/`, func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }},
		{`JSON \u002f`, func(s string) string {
			return strings.NewReplacer("/", `\u002f`, "+", `\u002b`, "=", `\u003d`, " ", `\u0020`).Replace(s)
		}},
		{"percent", url.QueryEscape},
		{"PHP percent-JSON", func(s string) string { return strings.ReplaceAll(url.PathEscape(s), "%2F", `\/`) }},
	}
	const cut = 64 << 10
	var spelling, straddle atomic.Int32
	printer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sp := spellings[spelling.Load()].spell
		authz := r.Header.Get("Authorization")
		_, cred, _ := strings.Cut(authz, " ")
		echo := "you sent " + sp(authz) + "; credential " + sp(cred)
		if k := straddle.Load(); k > 0 {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(strings.Repeat("x", cut-int(k)) + sp(cred) + "\n"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"` + echo + `"}`))
	}))
	t.Cleanup(printer.Close)

	dir := t.TempDir()
	tokenFile := writeFile(t, dir, "token", token+"\n")
	passFile := writeFile(t, dir, "pass", pass)
	cfg := writeFile(t, dir, "exporter.yml", "modules:\n"+
		"  bearer:\n    allowed_targets: [127.0.0.1]\n    http_client_config:\n      authorization: {credentials_file: "+tokenFile+"}\n"+
		"  basic:\n    allowed_targets: [127.0.0.1]\n    http_client_config:\n      basic_auth: {username: "+user+", password_file: "+passFile+"}\n")
	h := fileHarness(t, cfg, nil)

	check := func(what, text string, secrets ...string) {
		t.Helper()
		for _, s := range secrets {
			if run, ok := leaked(text, s); ok {
				t.Errorf("%s: %q shows:\n%s", what, run, text[max(0, len(text)-3000):])
			}
		}
	}
	probe := func(module string, secrets ...string) {
		t.Helper()
		for i := range spellings {
			for _, k := range []int32{0, 1, 7, 20} {
				spelling.Store(int32(i))
				straddle.Store(k)
				what := module + ", " + spellings[i].name + ", cut " + strconv.Itoa(int(k)) + " bytes into it"
				logsBefore := len(h.logs.String())
				q := "module=" + module + "&printer=line1&target=" + url.QueryEscape(printer.URL)
				code, _, body := h.get("/probe?" + q + "&debug=true")
				if code != http.StatusOK || !strings.Contains(body, "401") || !strings.Contains(body, "labelprinter_up 0") {
					t.Fatalf("%s: %d, no 401 shown, so the check proves little:\n%s", what, code, body)
				}
				check(what+": debug answer", body, secrets...)
				_, metrics := h.probe(q)
				check(what+": metrics", metrics, secrets...)
				logs := h.logs.String()[logsBefore:]
				if !strings.Contains(logs, "probe failed") {
					t.Fatalf("%s: no log line of the failure, so the check proves little:\n%s", what, logs)
				}
				check(what+": log", logs, secrets...)
			}
		}
	}
	probe("bearer", token)
	probe("basic", basic, pass)

	// The file is rotated: the next probe sends the new token and redacts it.
	writeFile(t, dir, "token", rotated+"\n")
	probe("bearer", rotated)
}

// TestOAuth2EchoesNeverShow: a module with OAuth2 client credentials. When the token endpoint
// refuses and echoes the client secret (the OAuth2 library quotes its answer in the round
// tripper's error, which reaches the debug answer straight from the transport), the secret is
// kept out by the SDK's rule, which holds it through WithRedactedValues. When the token is
// issued and the printer echoes the Authorization header, the access token, which the exporter
// never holds, is kept out by the value its transport was seen sending and by the
// Authorization-shaped pattern, raw, JSON-escaped, percent-encoded and bare.
func TestOAuth2EchoesNeverShow(t *testing.T) {
	const secret = "client/secret+S3CR3T==0123456789"
	const access = "ya29.a0AfB/zq+8Xy_0123456789-QRSTUV"
	var refuse atomic.Bool
	var spelling atomic.Int32
	spellings := []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.ReplaceAll(s, "/", `\/`) },
		func(s string) string {
			return strings.NewReplacer("/", `\u002f`, "+", `\u002b`, " ", `\u0020`).Replace(s)
		},
		url.QueryEscape,
		// The bare token, which no Authorization-shaped pattern finds: only the value the
		// module's transport was seen sending (httpcreds' Recorder) keeps it out.
		func(s string) string { return strings.TrimPrefix(s, "Bearer ") },
	}
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		_, sent, _ := r.BasicAuth()
		if sent == "" {
			sent = r.PostForm.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		if refuse.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"unknown secret ` + spellings[spelling.Load()](sent) + `"}`))
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"` + access + `","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokens.Close)
	printer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"you sent ` + spellings[spelling.Load()](r.Header.Get("Authorization")) + `"}`))
	}))
	t.Cleanup(printer.Close)
	dir := t.TempDir()
	secretFile := writeFile(t, dir, "secret", secret)
	cfg := writeFile(t, dir, "exporter.yml", "modules:\n  oauth:\n    allowed_targets: [127.0.0.1]\n    http_client_config:\n"+
		"      oauth2: {client_id: exporter, client_secret_file: "+secretFile+", token_url: "+tokens.URL+"/token}\n")
	h := fileHarness(t, cfg, nil)
	q := "module=oauth&printer=line1&target=" + url.QueryEscape(printer.URL)
	for _, r := range []bool{true, false} {
		refuse.Store(r)
		for i := range spellings {
			spelling.Store(int32(i))
			logsBefore := len(h.logs.String())
			code, _, body := h.get("/probe?" + q + "&debug=true")
			want := "you sent" // the printer's message, so the check below has text to look at
			if r {
				want = "unknown secret"
			}
			if code != http.StatusOK || !strings.Contains(body, want) {
				t.Fatalf("refuse %v, spelling %d: %d, no %q shown, so the check proves little:\n%s", r, i, code, want, body)
			}
			_, metrics := h.probe(q)
			for what, text := range map[string]string{"debug answer": body, "metrics": metrics, "log": h.logs.String()[logsBefore:]} {
				for _, s := range []string{secret, access} {
					if run, ok := leaked(text, s); ok {
						t.Errorf("refuse %v, spelling %d, %s: %q shows:\n%s", r, i, what, run, text)
					}
				}
			}
		}
	}
}
